"""What a server reads of the catalog: all of it (:func:`read_all`), or only the items
changed since the generation it holds (:func:`read_changes`, from the change log), each in
one read-only transaction and with the same statements, so both give the same rows."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass

from deltaport.catalog.database.connection import Database, Row, Transaction
from deltaport.catalog.rows import (
    ClientRow,
    RecipientRow,
    ShareRow,
    TableRow,
    TokenRow,
    recipient_row,
    share_row,
    table_row,
)

MAX_ITEMS_APPLIED = 2000
"""More changed items than this since a server's generation: it loads the catalog whole
(about as fast by then, and one read)."""
_CHUNK = 500
"""Keys per ``IN (...)`` list (well below either database's limit on parameters)."""

ShareOrder = tuple[int, str]
"""Where a share stands among the others: its creation time (ms), then its name."""


@dataclass(frozen=True)
class Rows:
    """Rows of the catalog, by key: all of them, or those of the items a change touched."""

    generation: int
    shares: dict[str, tuple[ShareOrder, ShareRow]]
    tables: dict[str, tuple[str, int, TableRow]]
    """Table key -> its share's key, its ordinal (tables are listed in that order), its row."""
    recipients: dict[str, RecipientRow]
    tokens: dict[str, dict[str, TokenRow]]
    """Recipient key -> token hash -> token (recipients with no token are left out)."""
    clients: dict[str, dict[str, ClientRow]]
    """Recipient key -> OAuth client id -> client."""


@dataclass(frozen=True)
class Changes:
    """The items changed since a generation: their keys, and their rows as they are now
    (an item whose key is here but has no row was deleted)."""

    shares: frozenset[str]
    tables: frozenset[str]
    recipients: frozenset[str]
    rows: Rows


def read_all(database: Database) -> Rows:
    with database.read() as tx:
        return _rows(tx, _generation(tx), None, None, None)


def read_changes(database: Database, since: int) -> Changes | None:
    """The items changed after generation ``since``; None when the log cannot say (it was
    pruned past ``since``, the database went back to an older generation, or too many
    items changed): the caller then reads everything."""
    with database.read() as tx:
        generation = _generation(tx)
        kept_from = tx.execute(
            "SELECT CAST(value AS BIGINT) FROM deltaport_meta WHERE key = 'changes_kept_from'"
        )
        if since > generation or not kept_from or since < int(kept_from[0][0]):
            return None
        logged = tx.execute(
            "SELECT DISTINCT kind, item_key FROM catalog_changes "
            "WHERE generation > ? AND generation <= ? LIMIT ?",
            (since, generation, MAX_ITEMS_APPLIED + 1),
        )
        if len(logged) > MAX_ITEMS_APPLIED:
            return None
        keys: dict[str, set[str]] = {"share": set(), "table": set(), "recipient": set()}
        for kind, key in logged:
            keys[kind].add(key)
        rows = _rows(tx, generation, keys["share"], keys["table"], keys["recipient"])
    return Changes(
        frozenset(keys["share"]), frozenset(keys["table"]), frozenset(keys["recipient"]), rows
    )


def _generation(tx: Transaction) -> int:
    return int(tx.execute("SELECT value FROM deltaport_meta WHERE key = 'generation'")[0][0])


_SHARES = (
    "SELECT name_key, created_at, name, id, comment, display_name, properties, schema_details "
    "FROM shares"
)
_TABLES = (
    "SELECT t.name_key, t.share_key, t.ordinal, s.name, t.schema_name, t.name, t.location, "
    "t.id, t.history_shared, t.start_version, t.partition_filter, t.access_modes, "
    "t.auxiliary_locations, t.comment, t.display_name, t.properties FROM shared_tables t "
    "JOIN shares s ON s.name_key = t.share_key"
)
_RECIPIENTS = (
    "SELECT name_key, name, properties, endpoint, token_lifetime_seconds, comment, "
    "ip_access_list, authentication_type, expires_at FROM recipients"
)
_GRANTS = "SELECT recipient_key, share_key FROM grants"
_TOKENS = "SELECT recipient_key, hash, expires_at, revoked_at FROM tokens"
_CLIENTS = "SELECT recipient_key, client_id, secret_hash, expires_at, revoked_at FROM oauth_clients"


def _rows(
    tx: Transaction,
    generation: int,
    shares: Collection[str] | None,
    tables: Collection[str] | None,
    recipients: Collection[str] | None,
) -> Rows:
    """The rows of the items named (None: of every item)."""
    granted: dict[str, list[str]] = {}
    for recipient_key, share_key in _select(tx, _GRANTS, "recipient_key", recipients):
        granted.setdefault(recipient_key, []).append(share_key)
    tokens: dict[str, dict[str, TokenRow]] = {}
    for r in _select(tx, _TOKENS, "recipient_key", recipients):
        tokens.setdefault(r[0], {})[r[1]] = TokenRow(r[0], r[2], r[3])
    clients: dict[str, dict[str, ClientRow]] = {}
    for r in _select(tx, _CLIENTS, "recipient_key", recipients):
        clients.setdefault(r[0], {})[r[1]] = ClientRow(r[2], TokenRow(r[0], r[3], r[4]))
    return Rows(
        generation,
        {r[0]: ((r[1], r[2]), share_row(r[2:])) for r in _select(tx, _SHARES, "name_key", shares)},
        {r[0]: (r[1], r[2], table_row(r[3:])) for r in _select(tx, _TABLES, "t.name_key", tables)},
        {
            r[0]: recipient_row(r, tuple(sorted(granted.get(r[0], ()))))
            for r in _select(tx, _RECIPIENTS, "name_key", recipients)
        },
        tokens,
        clients,
    )


def _select(
    tx: Transaction, select: str, column: str, keys: Collection[str] | None
) -> Iterator[Row]:
    """The rows of ``select`` whose ``column`` is one of ``keys`` (None: every row)."""
    if keys is None:
        yield from tx.execute(select)
        return
    ordered = sorted(keys)
    for start in range(0, len(ordered), _CHUNK):
        chunk = ordered[start : start + _CHUNK]
        marks = ",".join("?" * len(chunk))
        yield from tx.execute(f"{select} WHERE {column} IN ({marks})", chunk)
