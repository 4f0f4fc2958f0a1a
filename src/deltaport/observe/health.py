"""Whether this process should be sent requests (``/readyz``); ``/livez`` needs nothing.

A process is not ready while it drains (a stop was asked for: the load balancer should
send new requests elsewhere while the open ones finish) or while its catalog cannot be
read (the catalog database is away past ``catalogMaxStaleSeconds``, where every request
would get 503 ``TEMPORARILY_UNAVAILABLE``)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from deltaport.protocol.errors import SharingError


class Readiness:
    def __init__(self, catalog_probe: Callable[[], object] | None = None) -> None:
        """``catalog_probe`` raises a :class:`SharingError` while the catalog cannot be
        read (for example the live catalog's ``view``)."""
        self._probe = catalog_probe
        self._draining = threading.Event()

    def drain(self) -> None:
        """From now on, not ready (safe to call from a signal handler)."""
        self._draining.set()

    def not_ready_because(self) -> str | None:
        """Why the process is not ready, in words; None when it is."""
        if self._draining.is_set():
            return "draining: the server is shutting down"
        if self._probe is not None:
            try:
                self._probe()
            except SharingError:
                return "the catalog database cannot be read"
        return None
