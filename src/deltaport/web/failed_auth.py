"""A bound on failed authentications per client address, one per listener.

On the admin listener console logins, admin API bearer tokens and activation links share
one count per client address; on the sharing listener recipients' bearer tokens, OAuth
client credentials at the token endpoint and activation links do. After ``limit``
failures within ``window_seconds``, every further attempt from that address (right
credential or wrong) is answered 429 with ``Retry-After`` until the oldest of those
failures leaves the window: at most ``window_seconds`` after the failure that reached the
limit. Nothing during the lockout extends it: a refused attempt is not a failure, and the
failure of an attempt admitted before the limit was reached but answered after it (one
that waited for its body or for the catalog while others failed) is not counted, since the
address is already refused. A success does not clear the count: a guesser gains nothing
from also holding a valid token. Each failure is logged with the address and the count,
never the token; a refusal only when its address goes over the limit, not each one after
(a storm of refused guesses would otherwise cost a log line each, more than the 429
itself). At most :data:`ADDRESSES_KEPT` addresses are tracked (the least recently
failing are forgotten first), so the memory used is bounded whatever the traffic.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable

from deltaport.protocol.errors import TooManyRequestsError

log = logging.getLogger(__name__)

ADDRESSES_KEPT = 10_000


class FailedAuthLimit:
    def __init__(
        self,
        limit: int,
        window_seconds: int,
        clock: Callable[[], float] = time.monotonic,
        listener: str = "admin",
    ) -> None:
        self.limit = limit
        self.listener = listener
        self.window = window_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()
        self._refused: set[str] = set()  # addresses over the limit whose refusal was logged

    def check(self, address: str) -> None:
        """Raise :class:`TooManyRequestsError` while ``address`` is over the limit."""
        with self._lock:
            recent = self._recent(address)
            if recent is None or len(recent) < self.limit:
                self._refused.discard(address)
                return
            wait = max(1, math.ceil(recent[0] + self.window - self._clock()))
            logged = address in self._refused
            self._refused.add(address)
        if not logged:
            log.warning(
                "%s authentication refused for %s: %d failures in %d s (retry after %d s; "
                "its further refusals are not logged)",
                self.listener,
                address,
                self.limit,
                self.window,
                wait,
            )
        raise TooManyRequestsError(
            f"too many failed authentications from this address; try again in {wait} s", wait
        )

    def failed(self, address: str, what: str) -> None:
        """Count a failed authentication (``what``: "console login", "admin token")."""
        with self._lock:
            recent = self._recent(address)
            if recent is None:
                recent = self._failures[address] = deque(maxlen=self.limit)
            elif len(recent) >= self.limit:
                return  # refused already: a late failure must not move the lockout's end
            recent.append(self._clock())
            self._failures.move_to_end(address)
            while len(self._failures) > ADDRESSES_KEPT:
                self._refused.discard(self._failures.popitem(last=False)[0])
            count = len(recent)
        log.warning(
            "failed %s from %s (%d of %d allowed in %d s)",
            what,
            address,
            count,
            self.limit,
            self.window,
        )

    def _recent(self, address: str) -> deque[float] | None:
        """The failures of ``address`` still inside the window (older ones dropped)."""
        recent = self._failures.get(address)
        if recent is None:
            return None
        cutoff = self._clock() - self.window
        while recent and recent[0] <= cutoff:
            recent.popleft()
        if not recent:
            del self._failures[address]
            self._refused.discard(address)
            return None
        return recent


def client_address(scope_client: tuple[str, int] | None) -> str:
    """The address failures are counted against (the peer of the connection)."""
    return scope_client[0] if scope_client else "unknown"
