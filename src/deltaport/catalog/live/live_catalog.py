"""The catalog a server reads from: a database's contents held in memory and reloaded
when they change.

Requests never wait on the database: they read an immutable snapshot (the view and the
token table, :mod:`~deltaport.catalog.live.snapshot`) in memory. A thread of its own checks
the database's generation counter every ``poll_seconds`` (one small read) and, when another
process changed the catalog, reads in one read-only transaction the items changed since the
generation it holds (from the change log, :mod:`~deltaport.catalog.database.change_log`), builds
the new snapshot from the old one and those rows, and swaps it in with one assignment; a
change therefore reaches every server on the database within about ``poll_seconds``, at a
cost in proportion to the change. The first load, and any refresh the log cannot serve (it
was pruned past the generation held, or the change was too large), reads everything.

When the database cannot be read (restarting, stopped, locked), the thread tries again
with backoff (``poll_seconds`` doubled up to :data:`RETRY_MAX_SECONDS`) and requests are
served from the last snapshot, for at most ``max_stale_seconds`` after the last moment the
database was read; past that they get 503 ``TEMPORARILY_UNAVAILABLE``, so a change the
database acknowledged (a revocation) is never ignored for longer than that bound.
"""

from __future__ import annotations

import hmac
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import replace

from deltaport.catalog.database.connection import DatabaseUnavailableError
from deltaport.catalog.live.reading import read_all, read_changes
from deltaport.catalog.live.snapshot import OptionsFor, Snapshot, applied, loaded
from deltaport.catalog.model import CatalogView, Recipient
from deltaport.catalog.recipient_access import IpAccessList
from deltaport.catalog.rows import TokenRow
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.catalog.tokens import ACCESS_TOKEN_PREFIX, AccessTokens, presented_token
from deltaport.protocol.errors import TemporarilyUnavailableError, UnauthenticatedError
from deltaport.protocol.names import name_key

log = logging.getLogger(__name__)

POLL_SECONDS = 1.0
MAX_STALE_SECONDS = 30.0
RETRY_MAX_SECONDS = 5.0
Clock = Callable[[], float]
Removed = Callable[[list[str]], None]
"""Told the names of the recipients a refresh found deleted."""


class LiveCatalog:
    def __init__(
        self,
        store: SqlCatalog,
        options_for: OptionsFor,
        poll_seconds: float = POLL_SECONDS,
        max_stale_seconds: float = MAX_STALE_SECONDS,
        clock: Clock = time.monotonic,
        wall_clock: Clock = time.time,
        access_key: bytes | None = None,
        recipients_removed: Removed | None = None,
    ) -> None:
        """``clock`` (monotonic seconds) measures how old the snapshot is; ``wall_clock``
        (seconds since the epoch) judges token expiry. Tests give their own.

        OAuth access tokens are signed with ``access_key`` (the server's, from its signing
        key; none: one made for this process) mixed with the catalog's own key: a copy of
        the catalog database alone cannot mint one, and replicas with the same signing key
        on the same catalog accept each other's. ``recipients_removed`` is told which
        recipients each refresh found deleted (by this process or any other on the
        database), so that what is kept per recipient elsewhere (metrics) goes with them."""
        self._store = store
        self._recipients_removed = recipients_removed
        self._wall_clock = wall_clock
        self._options_for = options_for
        self._poll_seconds = poll_seconds
        self._max_stale_seconds = max_stale_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._poller: threading.Thread | None = None
        read_at = clock()
        self._snapshot = loaded(read_all(store.database), options_for)
        server_part = os.urandom(32) if access_key is None else access_key
        catalog_part = store.derived_key("oauth-access-tokens")
        self._access_tokens = AccessTokens(hmac.digest(server_part, catalog_part, "sha256"))
        self.full_loads = 0
        """How many times a refresh read the whole catalog (the change log could not say
        what changed)."""
        self._read_at = read_at
        """When the database was last read (the start of that read): the snapshot holds
        every change acknowledged before it."""

    def start(self) -> None:
        """Poll the database from a thread of its own from now on."""
        self._poller = threading.Thread(target=self._poll, name="catalog-poller", daemon=True)
        self._poller.start()

    def close(self) -> None:
        """Stop polling (a read under way ends on its own)."""
        self._stop.set()

    def refresh(self) -> None:
        """One check of the database: when its generation moved, read the items changed
        since (or, when the change log cannot say, everything) and swap in the new
        snapshot. Raises :class:`~deltaport.catalog.database.DatabaseUnavailableError` when
        it cannot."""
        with self._lock:
            read_at = self._clock()
            held = self._snapshot
            if self._store.generation() != held.generation:
                changes = read_changes(self._store.database, held.generation)
                if changes is None:
                    self._snapshot = loaded(read_all(self._store.database), self._options_for)
                    self.full_loads += 1
                else:
                    self._snapshot = applied(held, changes, self._options_for)
                self._removed(held, self._snapshot)
            self._read_at = read_at

    def _removed(self, before: Snapshot, after: Snapshot) -> None:
        gone = [r.name for key, r in before.recipients.items() if key not in after.recipients]
        if gone and self._recipients_removed is not None:
            self._recipients_removed(gone)

    @property
    def store(self) -> SqlCatalog:
        """The database the catalog is read from (written to by activation links)."""
        return self._store

    def view(self) -> CatalogView:
        return self._current().view

    def authenticate(self, authorization: str | None) -> Recipient:
        """The recipient of a bearer token, its :attr:`~Recipient.credential` naming the
        token; 401 for a missing, over-long, unknown, expired or revoked token (the message
        never says whose it was). Nothing of a presented token is remembered: its keyed
        hash is computed again each time (a few microseconds)."""
        given = presented_token(authorization)
        snapshot = self._current()
        if given.startswith(ACCESS_TOKEN_PREFIX):
            client_id = self._access_tokens.client_of(given, self._wall_clock())
            found = snapshot.clients.get(client_id)
            if found is None:
                raise UnauthenticatedError("the bearer token is not valid")
            credential, record = found[0], found[1].token
        else:
            known = snapshot.credentials.get(self._store.hash_token(given))
            if known is None:
                raise UnauthenticatedError("the bearer token is not valid")
            credential, record = known
        if not _live(record, self._wall_clock() * 1000):
            raise UnauthenticatedError(
                "the bearer token has expired or was revoked; ask the provider for a new profile"
            )
        return replace(snapshot.recipients[record.recipient_key], credential=credential)

    def client_credentials(
        self, client_id: str, secret: str, lifetime_seconds: int
    ) -> tuple[Recipient, str, int]:
        """An access token for an OAuth client whose secret is right and which is live: its
        recipient, the token and its lifetime in seconds (cut to the client's own end).
        :class:`UnauthenticatedError` otherwise, not saying which of the two was wrong."""
        snapshot = self._current()
        found = snapshot.clients.get(client_id)
        given = self._store.hash_token(secret)
        if found is None or not hmac.compare_digest(found[1].secret_hash, given):
            raise UnauthenticatedError("the client id or secret is not valid")
        token = found[1].token
        now_ms = self._wall_clock() * 1000
        if not _live(token, now_ms):
            raise UnauthenticatedError("the client's credentials have expired or were revoked")
        if token.expires_at is not None:
            lifetime_seconds = min(lifetime_seconds, int((token.expires_at - now_ms) // 1000))
        lifetime_seconds = max(lifetime_seconds, 1)
        expires_at = int(self._wall_clock()) + lifetime_seconds
        recipient = snapshot.recipients[token.recipient_key]
        return recipient, self._access_tokens.issue(client_id, expires_at), lifetime_seconds

    def recipient_count(self) -> int:
        return len(self._current().recipients)

    def may_read(self, recipient: str, credential: str, table_key: str) -> bool:
        """Whether ``recipient`` may still read the table with the token named by
        ``credential``: that token is its own and live, and the share is granted to it."""
        snapshot = self._current()
        found = snapshot.recipients.get(name_key(recipient))
        table = snapshot.view.table_by_key(table_key)
        if found is None or table is None or found.shares is None:
            return False
        if name_key(table.share) not in found.shares:
            return False
        token = snapshot.credentials.get(credential)
        return (
            token is not None
            and token[1].recipient_key == name_key(recipient)
            and _live(token[1], self._wall_clock() * 1000)
        )

    def ip_access(self, recipient: str) -> IpAccessList:
        """Where ``recipient``'s requests may come from (anywhere for an unknown name)."""
        found = self._current().recipients.get(name_key(recipient))
        return found.ip_access if found else IpAccessList()

    def _current(self) -> Snapshot:
        """The snapshot, while it is recent enough to answer from; else 503."""
        if self._clock() - self._read_at > self._max_stale_seconds:
            raise TemporarilyUnavailableError(
                "the server cannot read its catalog at the moment; retry later"
            )
        return self._snapshot

    def _poll(self) -> None:
        delay = self._poll_seconds
        failing = False
        while not self._stop.wait(delay):
            try:
                self.refresh()
            except Exception as exc:
                delay = min(max(delay, self._poll_seconds) * 2, RETRY_MAX_SECONDS)
                if not failing:
                    log.warning(
                        "the catalog could not be read (%s); serving the last one loaded for "
                        "at most %s s after the last read, retrying with backoff",
                        exc,
                        self._max_stale_seconds,
                        exc_info=not isinstance(exc, DatabaseUnavailableError),
                    )
                failing = True
            else:
                if failing:
                    log.warning("the catalog can be read again")
                failing = False
                delay = self._poll_seconds


def _live(token: TokenRow, now_ms: float) -> bool:
    return token.revoked_at is None and (token.expires_at is None or token.expires_at > now_ms)
