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

from deltaport.catalog.access import table_access
from deltaport.catalog.model import CatalogView, Recipient, Share, SharedSchema, SharedTable
from deltaport.catalog.sql_store import CatalogContents, SqlCatalog, TokenRow
from deltaport.protocol.errors import UnauthenticatedError
from deltaport.protocol.names import name_key
from deltaport.storage import parse_location

log = logging.getLogger(__name__)

POLL_SECONDS = 1.0
DIGESTS_KEPT = 10_000
OptionsFor = Callable[[str], dict[str, str]]
"""Storage options for a table location (from the server's ``storage`` prefixes)."""


class LiveCatalog:
    def __init__(
        self,
        store: SqlCatalog,
        options_for: OptionsFor,
        poll_seconds: float = POLL_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """``clock`` is the wall clock (seconds since the epoch) that token expiry is
        judged by; tests give their own."""
        self._store = store
        self._clock = clock
        self._options_for = options_for
        self._poll_seconds = poll_seconds
        self._lock = threading.Lock()
        self._checked_at = 0.0
        self._digests: dict[str, str] = {}
        """Token -> keyed hash of the tokens seen lately (hashing is most of a lookup)."""
        self._load(store.contents())

    def view(self) -> CatalogView:
        self._refresh()
        return self._view

    def authenticate(self, authorization: str | None) -> Recipient:
        """The recipient of a bearer token; 401 for a missing, unknown, expired or revoked
        token (the message never says whose it was)."""
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise UnauthenticatedError("missing bearer token")
        self._refresh()
        given = token.strip()
        digest = self._digests.get(given)
        if digest is None:
            if len(self._digests) >= DIGESTS_KEPT:
                self._digests.clear()
            digest = self._digests[given] = self._store.hash_token(given)
        record = self._tokens.get(digest)
        if record is None:
            raise UnauthenticatedError("the bearer token is not valid")
        now_ms = self._clock() * 1000
        if record.revoked_at is not None or (
            record.expires_at is not None and record.expires_at <= now_ms
        ):
            raise UnauthenticatedError(
                "the bearer token has expired or was revoked; ask the provider for a new profile"
            )
        return self._recipients[record.recipient_key]

    def may_read(self, recipient: str, table_key: str) -> bool:
        """Whether ``recipient`` still holds a live token and a grant of the table's share."""
        self._refresh()
        found = self._recipients.get(name_key(recipient))
        table = self._view.table_by_key(table_key)
        if found is None or table is None or found.shares is None:
            return False
        if name_key(table.share) not in found.shares:
            return False
        now_ms = self._clock() * 1000
        return any(
            t.recipient_key == name_key(recipient)
            and t.revoked_at is None
            and (t.expires_at is None or t.expires_at > now_ms)
            for t in self._tokens_of.get(name_key(recipient), ())
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
        self._view = _view(contents, self._options_for)
        self._recipients = {
            key: Recipient(r.name, frozenset(r.shares), dict(r.properties))
            for key, r in contents.recipients.items()
        }
        self._tokens = contents.tokens
        self._tokens_of: dict[str, list[TokenRow]] = {}
        for token in contents.tokens.values():
            self._tokens_of.setdefault(token.recipient_key, []).append(token)
        self._generation = contents.generation


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
