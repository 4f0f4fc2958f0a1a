"""The audit log's writer: records kept in memory by the request that made them and
written by a thread of their own, so that no answer waits on the database or the file.

The thread writes whatever is buffered every :data:`FLUSH_SECONDS` (to the catalog
database in one transaction, and as JSON lines), and once more when the log is closed, so
a clean stop loses nothing; only a killed process loses the last second. While the
database cannot be reached (or its disk is full) the records stay buffered and are written
once it answers; past :data:`MAX_BUFFERED` the oldest are dropped (counted, and logged at
the next flush as one line). A batch is written again whole after any failure, even one
whose commit the database may have applied (its ids are kept only once). JSON lines
that cannot be written (a full disk) are counted as dropped when the database has the
records, and kept for the next flush when it does not; a file never keeps a torn line.
Records older than the retention are removed hourly.

Every record is bounded (:func:`~deltaport.observe.audit_record.bounded`) as it is kept,
and storms of refused requests are kept as summaries
(:class:`~deltaport.observe.audit_storms.RefusalStorms`), written when their window ends
(and at the stop).
"""

from __future__ import annotations

import logging
import os
import stat
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TextIO

import msgspec

from deltaport.catalog.database.connection import Database
from deltaport.observe.audit_record import AuditRecord, as_json, bounded
from deltaport.observe.audit_store import new_id, remove_before, write
from deltaport.observe.audit_storms import RefusalStorms
from deltaport.observe.metrics import AUDIT_DROPPED, AUDIT_WRITTEN

log = logging.getLogger(__name__)

FLUSH_SECONDS = 1.0
MAX_BUFFERED = 100_000
RETENTION_CHECK_SECONDS = 3600.0
DAY_MS = 86_400_000


class AuditLog:
    """``database``: where records are kept (None: only as JSON lines); ``lines``: a text
    stream the JSON lines go to (None: none); ``retention_days``: how long the database
    keeps them (None: for ever); ``storms``: how storms of refused requests are summarised.
    ``clock`` gives seconds since the epoch."""

    def __init__(
        self,
        database: Database | None,
        lines: TextIO | None = None,
        retention_days: int | None = None,
        clock: Callable[[], float] = time.time,
        flush_seconds: float = FLUSH_SECONDS,
        storms: RefusalStorms | None = None,
    ) -> None:
        self._database = database
        self._lines = lines
        self._retention_days = retention_days
        self._clock = clock
        self._flush_seconds = flush_seconds
        self._storms = storms or RefusalStorms()
        self._buffer: deque[AuditRecord] = deque()
        self._lock = threading.Lock()  # one writer at a time
        self._buffer_lock = threading.Lock()
        self._stop = threading.Event()
        self._next_retention = 0.0
        self.written = 0
        self.dropped = 0
        self._dropped_unlogged = 0
        self._thread = threading.Thread(target=self._run, name="deltaport-audit", daemon=True)
        self._thread.start()

    def now_ms(self) -> int:
        return int(self._clock() * 1000)

    def record(self, record: AuditRecord) -> None:
        """Keep ``record``, bounded, for the next write (no I/O here), or count it in its
        storm's summary."""
        if not self._storms.keep(bounded(record)):
            return
        self._keep([record])

    def _keep(self, records: list[AuditRecord]) -> None:
        for record in records:
            if not record.id:
                record.id = new_id(record.time_ms)
        with self._buffer_lock:
            self._buffer.extend(records)
            self._bound()

    def flush(self, stopping: bool = False) -> None:
        """Write what is buffered now, with the summaries of the storms whose window ended
        (all of them when ``stopping``): to the database first (a batch it cannot take yet
        goes back to the buffer), then as JSON lines."""
        with self._lock:
            self._keep(self._storms.ended(None if stopping else self.now_ms()))
            with self._buffer_lock:
                batch, self._buffer = list(self._buffer), deque()
                dropped, self._dropped_unlogged = self._dropped_unlogged, 0
            if dropped:
                log.error(
                    "%d audit records dropped: more than %d waited for the catalog database "
                    "(the oldest go first)",
                    dropped,
                    MAX_BUFFERED,
                )
            if not batch:
                return
            if self._database is not None:
                try:
                    write(self._database, batch)
                except Exception as exc:  # unreachable, locked: try again next time
                    log.warning("audit records not written yet (%d kept): %s", len(batch), exc)
                    with self._buffer_lock:
                        self._buffer.extendleft(reversed(batch))
                        self._bound()
                    return
            if self._lines is not None:
                try:
                    _append(self._lines, "".join(_line(r) for r in batch))
                except OSError as exc:  # a full disk
                    if self._database is None:  # kept nowhere yet: try again next time
                        log.warning("audit records not written yet (%d kept): %s", len(batch), exc)
                        with self._buffer_lock:
                            self._buffer.extendleft(reversed(batch))
                            self._bound()
                        return
                    log.warning(
                        "%d audit records kept in the database but not written as JSON lines: %s",
                        len(batch),
                        exc,
                    )
                    self.dropped += len(batch)
                    AUDIT_DROPPED.inc(len(batch))
            self.written += len(batch)
            AUDIT_WRITTEN.inc(len(batch))

    def _bound(self) -> None:
        while len(self._buffer) > MAX_BUFFERED:
            self._buffer.popleft()
            self.dropped += 1
            self._dropped_unlogged += 1
            AUDIT_DROPPED.inc()

    def remove_expired(self) -> int:
        """Remove the database's records past the retention; returns how many."""
        if self._database is None or self._retention_days is None:
            return 0
        with self._lock:
            return remove_before(self._database, self.now_ms() - self._retention_days * DAY_MS)

    def close(self) -> None:
        """Stop the writer and write what is left."""
        self._stop.set()
        self._thread.join()
        self.flush(stopping=True)
        if self._buffer:
            log.error("%d audit records could not be written before the stop", len(self._buffer))
            self.dropped += len(self._buffer)
            AUDIT_DROPPED.inc(len(self._buffer))

    def _run(self) -> None:
        while not self._stop.wait(self._flush_seconds):
            self.flush()
            if time.monotonic() >= self._next_retention:
                self._next_retention = time.monotonic() + RETENTION_CHECK_SECONDS
                try:
                    removed = self.remove_expired()
                except Exception as exc:
                    log.warning("expired audit records not removed yet: %s", exc)
                    continue
                if removed:
                    log.info("removed %d audit records past retention", removed)


_encode = msgspec.json.encode


def _append(stream: TextIO, text: str) -> None:
    """Write ``text`` to ``stream``; to a file whole or not at all: a write cut short (a
    full disk) is truncated back off, so that no torn line is left for the next to follow."""
    try:
        descriptor = stream.fileno()
        regular = stat.S_ISREG(os.fstat(descriptor).st_mode)
    except (OSError, ValueError):  # not a file (io.UnsupportedOperation is both)
        regular = False
    if not regular:
        stream.write(text)
        stream.flush()
        return
    stream.flush()
    size = os.fstat(descriptor).st_size
    data = text.encode()
    try:
        while data:
            data = data[os.write(descriptor, data) :]
    except OSError:
        os.ftruncate(descriptor, size)
        raise


def _line(record: AuditRecord) -> str:
    return _encode(as_json(record)).decode() + "\n"
