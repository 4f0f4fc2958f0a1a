"""Serving one or more uvicorn servers in one process and event loop.

The sharing listener and, when configured, the admin listener run side by side; a
SIGINT or SIGTERM asks each to stop, and each then waits up to ``shutdownGraceSeconds``
for its open requests. uvicorn's own signal capture is per server (the last one
installed would win), so it is replaced by one handler for all.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Generator, Sequence
from types import FrameType

import uvicorn

_SIGNALS = (signal.SIGINT, signal.SIGTERM)
STARTUP_FAILURE = 3


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield  # serve_all handles the signals of every server


def serve_all(configs: Sequence[uvicorn.Config]) -> None:
    """Run a server for each of ``configs`` until a signal stops them all."""
    servers = [_Server(config) for config in configs]

    def handle(sig: int, frame: FrameType | None) -> None:
        for server in servers:
            server.handle_exit(sig, frame)

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
