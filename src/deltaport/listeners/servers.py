"""Serving one or more uvicorn servers in one process and event loop.

The sharing listener and, when configured, the admin listener run side by side; a
SIGINT or SIGTERM asks each to stop, and each then waits up to ``shutdownGraceSeconds``
for its open requests. uvicorn's own signal capture is per server (the last one
installed would win), so it is replaced by one handler for all.

uvicorn bounds only the requests it knows of. Work that an earlier request started in a
thread (a log read from storage that never answers, a stream whose close blocks) would
keep the process alive after them: asyncio waits for its executor's threads and Python
for every non-daemon thread. So the first signal also starts a watchdog: a process still
alive :data:`EXIT_MARGIN_SECONDS` after the grace period logs the threads still running
and ends at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Generator, Sequence
from types import FrameType

import uvicorn

_SIGNALS = (signal.SIGINT, signal.SIGTERM)
STARTUP_FAILURE = 3
EXIT_MARGIN_SECONDS = 2.0
log = logging.getLogger(__name__)


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield  # serve_all handles the signals of every server


def serve_all(
    configs: Sequence[uvicorn.Config],
    on_stop: Callable[[], None] = lambda: None,
    drain_seconds: float = 0,
) -> None:
    """Run a server for each of ``configs`` until a signal stops them all. A signal calls
    ``on_stop`` (``/readyz`` answers 503 from then on); with ``drain_seconds``, the servers
    go on serving that long before they stop (a second signal stops them at once), so a
    load balancer sees them not ready and sends new requests elsewhere first."""
    servers = [_Server(config) for config in configs]
    grace = max(config.timeout_graceful_shutdown or 0 for config in configs)
    watchdog = threading.Timer(grace + EXIT_MARGIN_SECONDS, _exit_now, args=(grace,))
    watchdog.daemon = True
    draining = threading.Event()

    def stop(sig: int, frame: FrameType | None) -> None:
        if not watchdog.is_alive():
            watchdog.start()
        for server in servers:
            server.handle_exit(sig, frame)

    drain = threading.Timer(drain_seconds, stop, args=(signal.SIGTERM, None))
    drain.daemon = True

    def handle(sig: int, frame: FrameType | None) -> None:
        on_stop()
        if drain_seconds > 0 and not draining.is_set():
            draining.set()
            log.info("draining for %s s before stopping (/readyz answers 503)", drain_seconds)
            drain.start()
            return
        drain.cancel()
        stop(sig, frame)

    originals = {sig: signal.signal(sig, handle) for sig in _SIGNALS}

    async def main() -> None:
        await asyncio.gather(*(server.serve() for server in servers))

    try:
        with asyncio.Runner(loop_factory=configs[0].get_loop_factory()) as runner:
            runner.run(main())
    finally:
        for sig, original in originals.items():
            signal.signal(sig, original)
    if not all(server.started for server in servers):
        sys.exit(STARTUP_FAILURE)


def _exit_now(grace: float) -> None:
    """End the process: it outlived its grace period (see the module's docstring)."""
    running = sorted(t.name for t in threading.enumerate() if t is not threading.current_thread())
    log.error(
        "still running %.0f s after the grace period of %.0f s (threads: %s); exiting now",
        EXIT_MARGIN_SECONDS,
        grace,
        ", ".join(running) or "none",
    )
    logging.shutdown()
    os._exit(0)
