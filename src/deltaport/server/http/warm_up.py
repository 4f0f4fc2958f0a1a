"""One-time work done at start-up that the first request would otherwise pay for.

pyarrow imports pandas on its first conversion to Python objects (seconds), and anyio
imports its worker-thread backend (uncompiled modules in a fresh environment) and starts
its first worker thread on the first call from the event loop.

Then everything made so far (modules, the catalog) is frozen out of the garbage
collector's reach: it lives as long as the process, and a full collection that walked it
(about a second with a catalog of 100,000 entries, all requests waiting on it) would
happen after every catalog reload.
"""

from __future__ import annotations

import gc
import importlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pyarrow as pa
from starlette.concurrency import run_in_threadpool


@asynccontextmanager
async def warmed_up(app: object) -> AsyncIterator[None]:
    """A Starlette lifespan doing the warm-up in a worker thread before serving."""
    await run_in_threadpool(_warm_up)
    gc.collect()
    gc.freeze()
    yield


def _warm_up() -> None:
    importlib.import_module("pandas")
    pa.array([""]).to_pylist()
