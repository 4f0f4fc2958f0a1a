"""Asynchronous queries: snapshots and file selections prepared in the background.

A query submitted with ``asyncquery=true`` is prepared by a small pool of worker threads
(the snapshot read, the partition filter and the hints applied) while its client polls.
Each recipient may have ``maxPerRecipient`` queries at once (more: 429 with
``Retry-After``) and hold at most ``maxBytesPerRecipient`` bytes of prepared selections;
a selection that does not fit is not held, and its pages are selected again from the
snapshot cache, as synchronous pages are. A query nobody polled for ``idleSeconds`` is
dropped (its preparation cancelled if it has not started) by the next request or by a
sweeper thread, within a quarter of ``idleSeconds``; a later poll with its id prepares it
again, since the id says everything needed (:mod:`deltaport.server.paging.
query_ids`).

A query is kept with the :func:`access` it was prepared under. Each poll and each
resubmission with its idempotency key passes the recipient's access as the catalog says it
now; a query whose access changed since (a partition filter bound to other properties, the
table's history rules or location) is dropped and prepared again under the new access, as
a new submission would be, so that it never lists a file the recipient may no longer see.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Hashable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from deltaport.catalog.model import SharedTable
from deltaport.config.model import ServerConfig
from deltaport.protocol.errors import InternalError, SharingError, TooManyRequestsError
from deltaport.server.tables.service import Selection

log = logging.getLogger(__name__)

Clock = Callable[[], float]
Prepare = Callable[[], Selection]


def access(table: SharedTable) -> Hashable:
    """What decides which files a query of ``table`` may list, beside the query itself:
    who reads it (the recipient's binding and its partition filter bound to its current
    properties), where the table is, and its history rules."""
    return (table.scope, table.id, table.location.uri, table.history_shared, table.start_version)


@dataclass(frozen=True)
class AsyncQuerySettings:
    enabled: bool = True
    max_per_recipient: int = 16
    max_bytes_per_recipient: int = 1 << 30
    idle_seconds: int = 600
    workers: int = 2


def async_settings(config: ServerConfig) -> AsyncQuerySettings:
    c = config.async_queries
    return AsyncQuerySettings(
        c.enabled, c.max_per_recipient, c.max_bytes_per_recipient, c.idle_seconds, c.workers
    )


@dataclass(frozen=True)
class Pending:
    """Not prepared yet."""


@dataclass(frozen=True)
class Ready:
    """Prepared; ``selection`` is None when it was not held (select again to answer)."""

    selection: Selection | None


@dataclass(frozen=True)
class Failed:
    error: SharingError


QueryState = Pending | Ready | Failed


@dataclass
class _Entry:
    owner: str
    access: Hashable
    last_seen: float
    dedupe: Hashable | None
    state: QueryState = field(default_factory=Pending)
    held_bytes: int = 0
    future: Future[None] | None = None


class AsyncQueries:
    """The queries being prepared or prepared on this server process."""

    def __init__(
        self,
        settings: AsyncQuerySettings,
        clock: Clock = time.time,
        before_prepare: Callable[[], object] | None = None,
        sweep_every: float | None = None,
    ) -> None:
        self.settings = settings
        self._clock = clock
        self._before_prepare = before_prepare
        self._lock = threading.Lock()
        self._entries: dict[str, _Entry] = {}
        self._by_dedupe: dict[Hashable, str] = {}
        self._pool = ThreadPoolExecutor(settings.workers, thread_name_prefix="deltaport-async")
        self._sweep_every = sweep_every or max(1.0, settings.idle_seconds / 4)
        self._closed = threading.Event()
        self._sweeper: threading.Thread | None = None

    def close(self) -> None:
        self._closed.set()
        self._pool.shutdown(wait=False, cancel_futures=True)

    # -- what tests and metrics read ------------------------------------------------------
    def count(self, owner: str | None = None) -> int:
        with self._lock:
            return sum(1 for e in self._entries.values() if owner in (None, e.owner))

    def known(self, query_id: str) -> bool:
        with self._lock:
            return query_id in self._entries

    def held_bytes(self, owner: str) -> int:
        with self._lock:
            return sum(e.held_bytes for e in self._entries.values() if e.owner == owner)

    # -- submission and polls ------------------------------------------------------------
    def submitted(self, dedupe: Hashable, access: Hashable) -> str | None:
        """The id of the query submitted earlier with the same idempotency key and
        parameters, while it is kept and its access has not changed (one whose access
        changed is dropped: None)."""
        with self._lock:
            self._sweep()
            query_id = self._by_dedupe.get(dedupe)
            if query_id is None:
                return None
            entry = self._entries[query_id]
            if entry.access != access:
                self._drop(query_id)
                return None
            entry.last_seen = self._clock()
            return query_id

    def start(
        self,
        query_id: str,
        owner: str,
        access: Hashable,
        prepare: Prepare,
        dedupe: Hashable | None = None,
    ) -> None:
        """Prepare ``query_id`` under ``access`` in the background; 429 past the
        recipient's bound."""
        with self._lock:
            self._sweep()
            if query_id in self._entries:
                return
            self._check_bound(owner)
            self._start_sweeper()
            entry = _Entry(owner, access, self._clock(), dedupe)
            self._entries[query_id] = entry
            if dedupe is not None:
                self._by_dedupe[dedupe] = query_id
            entry.future = self._pool.submit(self._prepare, query_id, entry, prepare)

    def poll(self, query_id: str, owner: str, access: Hashable, prepare: Prepare) -> QueryState:
        """The state of ``query_id`` under ``access``; one this process does not know
        (dropped when abandoned, started before a restart or on another replica) or knows
        prepared under another access is prepared again."""
        with self._lock:
            self._sweep()
            entry = self._entries.get(query_id)
            if entry is not None and entry.access == access:
                entry.last_seen = self._clock()
                return entry.state
            if entry is not None:
                self._drop(query_id)
        self.start(query_id, owner, access, prepare)
        return Pending()

    # -- inside ------------------------------------------------------------------------
    def _check_bound(self, owner: str) -> None:
        mine = [e for e in self._entries.values() if e.owner == owner]
        if len(mine) < self.settings.max_per_recipient:
            return
        idle = self.settings.idle_seconds
        soonest = min(e.last_seen + idle for e in mine) - self._clock()
        raise TooManyRequestsError(
            f"this recipient has {len(mine)} asynchronous queries, the most it may have at "
            "once; read or abandon one first",
            retry_after=max(1, math.ceil(soonest)),
        )

    def _start_sweeper(self) -> None:
        """A thread that drops abandoned queries while no request comes (the lock is
        held); started with the first query."""
        if self._sweeper is None:
            self._sweeper = threading.Thread(
                target=self._sweeping, name="deltaport-async-sweeper", daemon=True
            )
            self._sweeper.start()

    def _sweeping(self) -> None:
        while not self._closed.wait(self._sweep_every):
            with self._lock:
                self._sweep()

    def _sweep(self) -> None:
        """Drop the queries nobody polled for ``idle_seconds`` (the lock is held)."""
        deadline = self._clock() - self.settings.idle_seconds
        for query_id in [q for q, e in self._entries.items() if e.last_seen < deadline]:
            self._drop(query_id)

    def _drop(self, query_id: str) -> None:
        """Forget ``query_id``, its preparation cancelled if not started (the lock is held)."""
        entry = self._entries.pop(query_id)
        if entry.dedupe is not None:
            self._by_dedupe.pop(entry.dedupe, None)
        if entry.future is not None:
            entry.future.cancel()

    def _prepare(self, query_id: str, entry: _Entry, prepare: Prepare) -> None:
        state: QueryState
        try:
            if self._before_prepare is not None:
                self._before_prepare()
            selection = prepare()
        except SharingError as exc:
            state = Failed(exc)
        except Exception:
            log.exception("preparing an asynchronous query failed")
            state = Failed(InternalError())
        else:
            state = self._hold(entry, selection)
        with self._lock:
            if self._entries.get(query_id) is entry:
                entry.state = state

    def _hold(self, entry: _Entry, selection: Selection) -> Ready:
        size = selection.files.nbytes
        with self._lock:
            held = sum(e.held_bytes for e in self._entries.values() if e.owner == entry.owner)
            if held + size > self.settings.max_bytes_per_recipient:
                return Ready(None)
            entry.held_bytes = size
        return Ready(selection)
