"""The catalog a page at a time, as the console shows it: a page of shares or recipients
with what each row counts, one share with its tables and the recipients granted it, one
recipient with its grants and credentials, one shared table.

Each is a few statements in one read-only transaction, over the primary keys and the
indexes of the change log's migration (grants, tokens, OAuth clients and shared tables by
recipient or share), so a page costs the same with 10 shares or 10,000: never a read of
the whole catalog (:meth:`SqlCatalog.contents`) for one page of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from deltaport.catalog.database.connection import Database, Row, Transaction
from deltaport.catalog.rows import (
    RecipientRow,
    ShareRow,
    TableRow,
    TokenRow,
    recipient_row,
    share_row,
    table_row,
)
from deltaport.protocol.names import name_key

SHARE_COLUMNS = "SELECT s.name, s.id, s.comment, s.display_name, s.properties, s.schema_details"
_TABLES = (
    "SELECT s.name, t.schema_name, t.name, t.location, t.id, t.history_shared, "
    "t.start_version, t.partition_filter, t.access_modes, t.auxiliary_locations, "
    "t.comment, t.display_name, t.properties FROM shared_tables t "
    "JOIN shares s ON s.name_key = t.share_key"
)
RECIPIENT_COLUMNS = (
    "SELECT r.name_key, r.name, r.properties, r.endpoint, r.token_lifetime_seconds, "
    "r.comment, r.ip_access_list, r.authentication_type, r.expires_at"
)
LIVE = "revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)"
"""A token or OAuth client neither revoked nor expired at the time given as its parameter."""


@dataclass(frozen=True)
class ShareSummary:
    share: ShareRow
    tables: int
    recipients: int
    """How many recipients are granted the share."""


@dataclass(frozen=True)
class RecipientSummary:
    recipient: RecipientRow
    live_credentials: int
    """Its tokens and OAuth clients neither revoked nor expired."""


@dataclass(frozen=True)
class SharePage:
    rows: list[ShareSummary]
    total: int


@dataclass(frozen=True)
class RecipientPage:
    rows: list[RecipientSummary]
    total: int


@dataclass(frozen=True)
class ShareView:
    share: ShareRow
    tables: list[TableRow]
    """In the order they were added."""
    recipients: list[RecipientRow]
    """The recipients granted the share, by name."""


@dataclass(frozen=True)
class RecipientView:
    recipient: RecipientRow
    granted: list[str]
    """The names of the shares granted to it, in the shares' order."""
    credentials: list[tuple[str, TokenRow]]
    """Its tokens (``"token"``) and OAuth clients (``"OAuth client <id>"``), the soonest
    to end first (never a hash)."""


def share_page(database: Database, offset: int, limit: int) -> SharePage:
    """``limit`` shares from ``offset`` in the catalog's order (creation, then name)."""
    with database.read() as tx:
        total = int(tx.execute("SELECT COUNT(*) FROM shares")[0][0])
        rows = tx.execute(
            f"{SHARE_COLUMNS}, "
            "(SELECT COUNT(*) FROM shared_tables t WHERE t.share_key = s.name_key), "
            "(SELECT COUNT(*) FROM grants g WHERE g.share_key = s.name_key) "
            "FROM shares s ORDER BY s.created_at, s.name LIMIT ? OFFSET ?",
            (limit, offset),
        )
    return SharePage([ShareSummary(share_row(r[:6]), int(r[6]), int(r[7])) for r in rows], total)


def recipient_page(database: Database, offset: int, limit: int, now: int) -> RecipientPage:
    """``limit`` recipients from ``offset`` by name key; a credential is live at ``now``
    (milliseconds since the epoch) unless revoked or expired."""
    with database.read() as tx:
        total = int(tx.execute("SELECT COUNT(*) FROM recipients")[0][0])
        rows = tx.execute(
            f"{RECIPIENT_COLUMNS}, "
            f"(SELECT COUNT(*) FROM tokens t WHERE t.recipient_key = r.name_key AND {LIVE}), "
            "(SELECT COUNT(*) FROM oauth_clients c "
            f"WHERE c.recipient_key = r.name_key AND {LIVE}) "
            "FROM recipients r ORDER BY r.name_key LIMIT ? OFFSET ?",
            (now, now, limit, offset),
        )
        granted = grants_of(
            tx,
            "SELECT name_key FROM recipients ORDER BY name_key LIMIT ? OFFSET ?",
            (limit, offset),
        )
    return RecipientPage(
        [
            RecipientSummary(recipient_row(r[:9], granted.get(r[0], ())), int(r[9]) + int(r[10]))
            for r in rows
        ],
        total,
    )


def share_view(database: Database, name: str) -> ShareView | None:
    """The share ``name`` (compared by its key) with its tables and its recipients; None
    when there is no such share."""
    key = name_key(name)
    with database.read() as tx:
        found = tx.execute(f"{SHARE_COLUMNS} FROM shares s WHERE s.name_key = ?", (key,))
        if not found:
            return None
        tables = tx.execute(f"{_TABLES} WHERE t.share_key = ? ORDER BY t.ordinal", (key,))
        recipients = tx.execute(
            f"{RECIPIENT_COLUMNS} FROM grants g JOIN recipients r ON r.name_key = g.recipient_key "
            "WHERE g.share_key = ?",
            (key,),
        )
        granted = grants_of(tx, "SELECT recipient_key FROM grants WHERE share_key = ?", (key,))
    return ShareView(
        share_row(found[0]),
        [table_row(r) for r in tables],
        sorted((recipient_row(r, granted.get(r[0], ())) for r in recipients), key=lambda r: r.name),
    )


def recipient_view(database: Database, name: str) -> RecipientView | None:
    """The recipient ``name`` (compared by its key) with its grants and credentials; None
    when there is no such recipient."""
    key = name_key(name)
    with database.read() as tx:
        found = tx.execute(f"{RECIPIENT_COLUMNS} FROM recipients r WHERE r.name_key = ?", (key,))
        if not found:
            return None
        shares = tx.execute(
            "SELECT s.name_key, s.name FROM grants g JOIN shares s ON s.name_key = g.share_key "
            "WHERE g.recipient_key = ? ORDER BY s.created_at, s.name",
            (key,),
        )
        tokens = tx.execute(
            "SELECT recipient_key, expires_at, revoked_at FROM tokens WHERE recipient_key = ?",
            (key,),
        )
        clients = tx.execute(
            "SELECT client_id, recipient_key, expires_at, revoked_at "
            "FROM oauth_clients WHERE recipient_key = ? ORDER BY client_id",
            (key,),
        )
    credentials = [("token", TokenRow(*r)) for r in tokens]
    credentials += [(f"OAuth client {r[0]}", TokenRow(*r[1:])) for r in clients]
    credentials.sort(key=lambda c: (c[1].expires_at is None, c[1].expires_at or 0))
    return RecipientView(
        recipient_row(found[0], tuple(sorted(s[0] for s in shares))),
        [s[1] for s in shares],
        credentials,
    )


def all_tables(database: Database) -> tuple[int, list[TableRow]]:
    """The catalog's generation and every shared table, in the order they were added (the
    shares and schemas they make up, without the recipients and credentials)."""
    with database.read() as tx:
        generation = tx.execute("SELECT value FROM deltaport_meta WHERE key = 'generation'")
        tables = tx.execute(f"{_TABLES} ORDER BY t.ordinal")
    return int(generation[0][0]), [table_row(r) for r in tables]


def grantable(database: Database, recipient: str, limit: int) -> list[str]:
    """The names of the first ``limit`` shares (in the catalog's order) not granted to
    ``recipient``."""
    rows = database.query(
        "SELECT name FROM shares WHERE name_key NOT IN "
        "(SELECT share_key FROM grants WHERE recipient_key = ?) "
        "ORDER BY created_at, name LIMIT ?",
        (name_key(recipient), limit),
    )
    return [r[0] for r in rows]


def shared_table(database: Database, share: str, schema: str, name: str) -> TableRow | None:
    """The table ``share.schema.name`` (compared by its key); None when it is not shared."""
    rows = database.query(
        f"{_TABLES} WHERE t.name_key = ?", (name_key(f"{share}.{schema}.{name}"),)
    )
    return table_row(rows[0]) if rows else None


def grants_of(
    tx: Transaction, recipients: str, params: Sequence[object]
) -> dict[str, tuple[str, ...]]:
    """The share keys granted to each recipient whose key the statement ``recipients``
    selects (a page of them, or those of one share), or that it lists (``?, ?``)."""
    rows: list[Row] = tx.execute(
        f"SELECT recipient_key, share_key FROM grants WHERE recipient_key IN ({recipients}) "
        "ORDER BY recipient_key, share_key",
        params,
    )
    granted: dict[str, list[str]] = {}
    for recipient_key, share_key in rows:
        granted.setdefault(recipient_key, []).append(share_key)
    return {k: tuple(v) for k, v in granted.items()}
