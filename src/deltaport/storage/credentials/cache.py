"""Vended credentials reused per directory while they have enough life left.

A credential is handed out again while at least ``min_remaining`` of its life is left
(the server uses half the configured duration), so a burst of recipients costs one call to
the cloud, each recipient gets a credential with at least that much life, and none outlives
what the cloud issued for the configured duration. One lock per directory: concurrent
requests for a directory wait for the one call instead of each making theirs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from deltaport.storage.credentials.settings import Vended
from deltaport.storage.uri import Location

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Issued:
    vended: Vended
    fresh: bool
    """True when this request made the call to the cloud."""


class CredentialCache:
    def __init__(
        self,
        vend: Callable[[Location], Vended],
        min_remaining: timedelta,
        clock: Clock = utc_now,
    ) -> None:
        self._vend = vend
        self._min_remaining = min_remaining
        self._clock = clock
        self._held: dict[str, Vended] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def get(self, location: Location) -> Issued:
        with self._guard:
            lock = self._locks.setdefault(location.uri, threading.Lock())
        with lock:
            held = self._held.get(location.uri)
            if held is not None and held.expires_at - self._clock() >= self._min_remaining:
                return Issued(held, fresh=False)
            vended = self._vend(location)
            self._held[location.uri] = vended
            return Issued(vended, fresh=True)
