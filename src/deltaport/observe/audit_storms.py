"""Storms of refused requests recorded as summaries, so that nobody can fill the disk
through the audit log.

A refused request (a 4xx status) that no recipient or admin token was accepted for
costs its sender nothing but a connection: a record each would let anyone grow the log
as fast as the server answers. So, from each client address, the first
``recorded`` refusals of a window of ``window_ms`` are kept as they are and the others
are counted: one summary record per address and status when the window ends
(:data:`~deltaport.observe.audit_record.REFUSED_REQUESTS`, with the count, the time of the
first one counted, ``durationMs`` from the first to the last, and the first one's
``errorCode``), as the failed-authentication limit logs one line for a storm of refused
guesses. At most :data:`ADDRESSES_KEPT` addresses are tracked in a window; the refusals
of any more are counted together, in summaries without an address. Whatever arrives, a
window therefore adds at most ``recorded`` records per tracked address and one summary per
tracked address (and one for the rest) and status. A server error (5xx, such as the 503
of a catalog outage) is not a refusal: each keeps its own record, as the operator of an
outage needs every answer accounted for.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from deltaport.observe.audit_record import REFUSED_REQUESTS, AuditRecord

WINDOW_MS = 60_000
RECORDED = 10
"""Refusals from one address kept whole in a window."""
ADDRESSES_KEPT = 1000
_REFUSAL_STATUSES = range(400, 500)


@dataclass
class _Counted:
    first: AuditRecord
    last_ms: int
    count: int = 1


@dataclass
class _Window:
    start_ms: int
    recorded: int = 0


class RefusalStorms:
    """``window_ms``: how long a window lasts (from its address's first refusal);
    ``recorded``: the refusals of an address kept whole in a window."""

    def __init__(self, window_ms: int = WINDOW_MS, recorded: int = RECORDED) -> None:
        self.window_ms = window_ms
        self.recorded = recorded
        self._lock = threading.Lock()
        self._windows: dict[str | None, _Window] = {}
        self._counted: dict[tuple[str | None, int], _Counted] = {}

    def keep(self, record: AuditRecord) -> bool:
        """Whether ``record`` is to be written as it is (False: it was counted)."""
        if not _refused(record):
            return True
        with self._lock:
            address = record.client_address
            window = self._windows.get(address)
            if window is None and len(self._windows) >= ADDRESSES_KEPT:
                address = None
                window = self._windows.get(None)
            if window is None:
                window = self._windows[address] = _Window(record.time_ms)
            if window.recorded < self.recorded:
                window.recorded += 1
                return True
            key = (address, record.status)
            counted = self._counted.get(key)
            if counted is None:
                self._counted[key] = _Counted(record, record.time_ms)
            else:
                counted.count += 1
                counted.last_ms = max(counted.last_ms, record.time_ms)
            return False

    def ended(self, now_ms: int | None = None) -> list[AuditRecord]:
        """The summaries of the windows ended by ``now_ms`` (None: of every window, for a
        stop), those windows forgotten."""
        with self._lock:
            ended = {
                address
                for address, window in self._windows.items()
                if now_ms is None or window.start_ms + self.window_ms <= now_ms
            }
            for address in ended:
                del self._windows[address]
            done = [key for key in self._counted if key[0] in ended]
            return [_summary(key[0], self._counted.pop(key)) for key in done]


def _refused(record: AuditRecord) -> bool:
    return record.status in _REFUSAL_STATUSES and record.recipient is None and record.admin is None


def _summary(address: str | None, counted: _Counted) -> AuditRecord:
    first = counted.first
    return AuditRecord(
        time_ms=first.time_ms,
        operation=REFUSED_REQUESTS,
        status=first.status,
        duration_ms=counted.last_ms - first.time_ms,
        client_address=address,
        error_code=first.error_code,
        count=counted.count,
    )
