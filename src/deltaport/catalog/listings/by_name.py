"""Shares and recipients in the order of their name keys, a page at a time after a given
key, as the provider API (Unity Catalog's shape) pages them: keyset paging, so that a page
costs the same at the first recipient as at the ten-thousandth, and the whole catalog
(:meth:`SqlCatalog.contents`) is never read for one page or one recipient.

Keys are compared by code point on both databases (``COLLATE "C"`` on PostgreSQL, whose
default collation follows the server's locale; SQLite compares bytes, which for UTF-8 is
the same order), so pages come in the order Python sorts the keys.
"""

from __future__ import annotations

from dataclasses import dataclass

from deltaport.catalog.database.connection import Database, Row, Transaction
from deltaport.catalog.listings.summaries import LIVE, RECIPIENT_COLUMNS, SHARE_COLUMNS, grants_of
from deltaport.catalog.rows import RecipientRow, ShareRow, TokenRow, recipient_row, share_row
from deltaport.protocol.names import name_key


@dataclass(frozen=True)
class RecipientCredentials:
    """A recipient with its live credentials (neither revoked nor expired) and whether an
    activation link of it is still unused."""

    recipient: RecipientRow
    tokens: list[tuple[str, TokenRow]]
    """Its live bearer tokens with their hashes (for public ids, never shown)."""
    clients: list[TokenRow]
    """Its live OAuth clients."""
    unused_link: bool


def shares_after(database: Database, after: str | None, limit: int) -> list[ShareRow]:
    """``limit`` shares whose keys follow ``after`` (from the first when None)."""
    key = _key(database, "s.name_key")
    where, params = _after(key, after)
    rows = database.query(
        f"{SHARE_COLUMNS} FROM shares s {where} ORDER BY {key} LIMIT ?", (*params, limit)
    )
    return [share_row(r) for r in rows]


def recipients_after(
    database: Database, after: str | None, limit: int, now: int
) -> list[RecipientCredentials]:
    """``limit`` recipients whose keys follow ``after`` (from the first when None), with
    their credentials live at ``now`` (milliseconds since the epoch)."""
    key = _key(database, "r.name_key")
    where, params = _after(key, after)
    with database.read() as tx:
        rows = tx.execute(
            f"{RECIPIENT_COLUMNS} FROM recipients r {where} ORDER BY {key} LIMIT ?",
            (*params, limit),
        )
        return _with_credentials(tx, rows, now)


def recipient_credentials(database: Database, name: str, now: int) -> RecipientCredentials | None:
    """The recipient ``name`` (compared by its key) with its credentials live at ``now``;
    None when there is no such recipient."""
    with database.read() as tx:
        rows = tx.execute(
            f"{RECIPIENT_COLUMNS} FROM recipients r WHERE r.name_key = ?", (name_key(name),)
        )
        found = _with_credentials(tx, rows, now)
    return found[0] if found else None


def _with_credentials(tx: Transaction, rows: list[Row], now: int) -> list[RecipientCredentials]:
    """The recipients of ``rows`` (as :data:`RECIPIENT_COLUMNS` selects them), each with
    its grants and its credentials live at ``now``."""
    if not rows:
        return []
    keys = [str(r[0]) for r in rows]
    marks = ", ".join("?" * len(keys))
    granted = grants_of(tx, marks, keys)
    tokens: dict[str, list[tuple[str, TokenRow]]] = {k: [] for k in keys}
    for hashed, *token in tx.execute(
        "SELECT hash, recipient_key, expires_at, revoked_at FROM tokens "
        f"WHERE recipient_key IN ({marks}) AND {LIVE}",
        (*keys, now),
    ):
        row = TokenRow(*token)
        tokens[row.recipient_key].append((str(hashed), row))
    clients: dict[str, list[TokenRow]] = {k: [] for k in keys}
    for client in tx.execute(
        "SELECT recipient_key, expires_at, revoked_at FROM oauth_clients "
        f"WHERE recipient_key IN ({marks}) AND {LIVE}",
        (*keys, now),
    ):
        row = TokenRow(*client)
        clients[row.recipient_key].append(row)
    linked = {
        r[0]
        for r in tx.execute(
            "SELECT DISTINCT recipient_key FROM activation_links "
            f"WHERE recipient_key IN ({marks}) AND used_at IS NULL AND expires_at > ?",
            (*keys, now),
        )
    }
    return [
        RecipientCredentials(
            recipient_row(r, granted.get(str(r[0]), ())),
            tokens[str(r[0])],
            clients[str(r[0])],
            r[0] in linked,
        )
        for r in rows
    ]


def _key(database: Database, column: str) -> str:
    return f'{column} COLLATE "C"' if database.kind == "postgresql" else column


def _after(key: str, after: str | None) -> tuple[str, tuple[str, ...]]:
    return ("", ()) if after is None else (f"WHERE {key} > ?", (after,))
