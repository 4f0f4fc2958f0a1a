"""The catalog a server reads from: a database's contents held in memory and reloaded
when they change.

Requests never wait on the database: they read the view and the token table in memory. At
most every ``poll_seconds`` a request checks the database's generation counter (one small
read) and, when another process changed the catalog, reloads it whole; a change therefore
reaches every server on the database within about ``poll_seconds``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import replace

from deltaport.catalog.access import table_access
from deltaport.catalog.model import CatalogView, Recipient, Share, SharedSchema, SharedTable
from deltaport.catalog.sql_store import CatalogContents, SqlCatalog, TokenRow
from deltaport.catalog.tokens import credential_id, presented_token
from deltaport.protocol.errors import UnauthenticatedError
from deltaport.protocol.names import name_key
from deltaport.storage import parse_location

log = logging.getLogger(__name__)

POLL_SECONDS = 1.0
OptionsFor = Callable[[str], dict[str, str]]
"""Storage options for a table location (from the server's ``storage`` prefixes)."""


class LiveCatalog:
    def __init__(
        self, store: SqlCatalog, options_for: OptionsFor, poll_seconds: float = POLL_SECONDS
    ) -> None:
        self._store = store
        self._options_for = options_for
        self._poll_seconds = poll_seconds
        self._lock = threading.Lock()
        self._checked_at = 0.0
        self._load(store.contents())

    def view(self) -> CatalogView:
        self._refresh()
        return self._view

    def authenticate(self, authorization: str | None) -> Recipient:
        """The recipient of a bearer token, its :attr:`~Recipient.credential` naming the
        token; 401 for a missing, over-long, unknown, expired or revoked token (the message
        never says whose it was). Nothing of a presented token is remembered: its keyed
        hash is computed again each time (a few microseconds)."""
        given = presented_token(authorization)
        self._refresh()
        found = self._by_hash.get(self._store.hash_token(given))
        if found is None:
            raise UnauthenticatedError("the bearer token is not valid")
        record, recipient = found
        if not _live(record, time.time() * 1000):
            raise UnauthenticatedError(
                "the bearer token has expired or was revoked; ask the provider for a new profile"
            )
        return recipient

    def may_read(self, recipient: str, credential: str, table_key: str) -> bool:
        """Whether ``recipient`` may still read the table with the token named by
        ``credential``: that token is its own and live, and the share is granted to it."""
        self._refresh()
        found = self._recipients.get(name_key(recipient))
        table = self._view.table_by_key(table_key)
        if found is None or table is None or found.shares is None:
            return False
        if name_key(table.share) not in found.shares:
            return False
        token = self._by_credential.get(credential)
        return (
            token is not None
            and token.recipient_key == name_key(recipient)
            and _live(token, time.time() * 1000)
        )

    def _refresh(self) -> None:
        now = time.monotonic()
        if now - self._checked_at < self._poll_seconds:
            return
        with self._lock:
            if now - self._checked_at < self._poll_seconds:
                return
            self._checked_at = now
            try:
                changed = self._store.generation() != self._generation
                if changed:
                    self._load(self._store.contents())
            except Exception:
                log.exception("the catalog could not be read; serving the last one loaded")

    def _load(self, contents: CatalogContents) -> None:
        recipients = {
            key: Recipient(r.name, frozenset(r.shares), dict(r.properties))
            for key, r in contents.recipients.items()
        }
        by_hash: dict[str, tuple[TokenRow, Recipient]] = {}
        by_credential: dict[str, TokenRow] = {}
        for hashed, token in contents.tokens.items():
            credential = credential_id(hashed)
            owner = recipients.get(token.recipient_key)
            if owner is not None:
                by_hash[hashed] = (token, replace(owner, credential=credential))
            by_credential[credential] = token
        self._view = _view(contents, self._options_for)
        self._recipients = recipients
        self._by_hash = by_hash
        """Token hash -> the token's row and its recipient (named by the token)."""
        self._by_credential = by_credential
        self._generation = contents.generation


def _live(token: TokenRow, now_ms: float) -> bool:
    return token.revoked_at is None and (token.expires_at is None or token.expires_at > now_ms)


def _view(contents: CatalogContents, options_for: OptionsFor) -> CatalogView:
    shares: dict[str, Share] = {
        name_key(s.name): Share(s.name, id=s.id, comment=s.comment) for s in contents.shares
    }
    for t in contents.tables:
        share = shares[name_key(t.share)]
        schema = share.schemas.setdefault(name_key(t.schema), SharedSchema(share.name, t.schema))
        location = parse_location(t.location)
        schema.tables[name_key(t.name)] = SharedTable(
            share=share.name,
            schema=schema.name,
            name=t.name,
            location=location,
            storage_options=options_for(t.location),
            id=t.id,
            share_id=share.id,
            history_shared=t.history_shared,
            start_version=t.start_version,
            access=table_access(location, t.location, t.access_modes, t.auxiliary_locations),
            partition_filter=t.partition_filter,
        )
    return CatalogView(list(shares.values()))
