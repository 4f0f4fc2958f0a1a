"""Stopping work for a client that has left.

An answer is prepared in a worker thread (log replay, hint evaluation) and then streamed
from one. :func:`while_connected` runs the preparation while it watches the connection:
when the client disconnects, the work stops at its next :func:`check_connected` with
:class:`ClientGone`. :func:`closing_body` streams an answer and closes its iterator
however the stream ends (finished, client gone, server shutting down), so what the answer
holds (prepared pieces, prefetch threads) is given back at once, not when the garbage
collector gets to it.
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextvars import ContextVar
from typing import TypeVar

import anyio
import anyio.to_thread
from starlette.requests import Request

from deltaport.server.answers.ndjson import Chunk

T = TypeVar("T")

_gone: ContextVar[threading.Event | None] = ContextVar("deltaport_client_gone", default=None)
_open_bodies = 0
_open_lock = threading.Lock()


class ClientGone(Exception):
    """The client disconnected before its answer was ready."""


def check_connected() -> None:
    """Raise :class:`ClientGone` when the client of the work in progress has left (a no-op
    outside :func:`while_connected`)."""
    event = _gone.get()
    if event is not None and event.is_set():
        raise ClientGone()


async def while_connected(request: Request, func: Callable[..., T], *args: object) -> T:
    """``func(*args)`` in a worker thread, told to stop when the client disconnects.

    Call it once the request body has been read: the watcher takes the next message of
    the connection, which is then only ever the disconnect."""
    gone = threading.Event()

    def run() -> T:
        _gone.set(gone)
        return func(*args)

    async def watch() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass
        gone.set()

    failure: Exception | None = None
    async with anyio.create_task_group() as group:
        group.start_soon(watch)
        try:
            result = await anyio.to_thread.run_sync(run)
        except Exception as exc:  # raised below, not wrapped in an exception group
            failure = exc
        finally:
            group.cancel_scope.cancel()
    if failure is not None:
        raise failure
    return result


async def closing_body(chunks: Iterator[Chunk]) -> AsyncIterator[Chunk]:
    """``chunks`` pulled in worker threads; closed when the stream ends for any reason."""
    global _open_bodies
    with _open_lock:
        _open_bodies += 1
    try:
        while True:
            chunk = await anyio.to_thread.run_sync(next, chunks, None)
            if chunk is None:
                return
            yield chunk
    finally:
        with anyio.CancelScope(shield=True):
            close = getattr(chunks, "close", None)
            if close is not None:
                await anyio.to_thread.run_sync(close)
        with _open_lock:
            _open_bodies -= 1


def open_bodies() -> int:
    """How many answer bodies are being streamed now."""
    return _open_bodies
