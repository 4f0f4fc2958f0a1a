"""Per-recipient request rate limits on the sharing listener (a token bucket per recipient).

Each recipient has a bucket of ``burst`` requests refilled at ``requests_per_second``; a
request finding it empty is answered 429 ``TOO_MANY_REQUESTS`` with ``Retry-After`` (the
whole seconds until one request is available again) before any work is done, so a greedy
recipient costs the server one dictionary lookup per refused request and the others keep
their share of it. Overrides give named recipients (names compared without case) other
settings. At most :data:`RECIPIENTS_KEPT` buckets are kept (the least recently used are
forgotten first: a forgotten bucket is full again, which only ever favours the recipient).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from deltaport.protocol.errors import TooManyRequestsError

log = logging.getLogger(__name__)

RECIPIENTS_KEPT = 10_000


@dataclass(frozen=True)
class Rate:
    """``requests_per_second`` sustained, up to ``burst`` at once."""

    requests_per_second: float
    burst: int


class RecipientRateLimits:
    def __init__(
        self,
        default: Rate | None,
        overrides: Mapping[str, Rate] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._default = default
        self._overrides = {name.casefold(): rate for name, rate in (overrides or {}).items()}
        self._clock = clock
        self._lock = threading.Lock()
        # recipient key -> (requests available, when they were counted)
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def admit(self, recipient: str) -> None:
        """Take one request from ``recipient``'s bucket; raise :class:`TooManyRequestsError`
        when it is empty (nothing is taken then)."""
        key = recipient.casefold()
        rate = self._overrides.get(key, self._default)
        if rate is None:
            return
        with self._lock:
            now = self._clock()
            available, counted = self._buckets.get(key, (float(rate.burst), now))
            available = min(
                float(rate.burst), available + (now - counted) * rate.requests_per_second
            )
            if available >= 1:
                self._buckets[key] = (available - 1, now)
                self._buckets.move_to_end(key)
                while len(self._buckets) > RECIPIENTS_KEPT:
                    self._buckets.popitem(last=False)
                return
            self._buckets[key] = (available, now)
            wait = max(1, math.ceil((1 - available) / rate.requests_per_second))
        log.debug("recipient %s is over its rate limit (retry after %d s)", recipient, wait)
        raise TooManyRequestsError(
            f"too many requests for this recipient; try again in {wait} s", wait
        )
