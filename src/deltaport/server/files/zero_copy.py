"""Zero-copy file bodies: the ASGI ``http.response.zerocopysend`` extension on uvicorn.

uvicorn does not implement this extension of the ASGI spec, so a big file used to be read
into memory a megabyte at a time and written through the transport: for a gigabyte, about
1.2 s of server CPU, mostly the kernel copying the bytes twice and handing out fresh
buffers. With ``os.sendfile`` the kernel passes the page-cache pages to the socket itself
(about 0.4 s), which leaves the cores to the recipients decoding the files.

:class:`ZeroCopyHttpToolsProtocol` is uvicorn's HTTP protocol with the extension advertised
on plain-HTTP connections (TLS must encrypt in user space, so HTTPS answers keep the
ordinary path). A file goes out from a worker thread that waits for the socket to take
more; the event loop goes on serving other connections meanwhile. Those threads come from
a pool of their own, so slow recipients cannot take the threads other requests need.

The protocol hooks into uvicorn where it starts a request's task (``_start_asgi_task``) and
reads the request cycle's response state. A uvicorn without that hook never offers the
extension, and files take the ordinary path; the tests fail if the hook stops being called.
"""

from __future__ import annotations

import asyncio
import errno
import os
import select
import threading
import weakref
from typing import Any

import anyio
import anyio.to_thread
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

ZERO_COPY_SEND = "http.response.zerocopysend"
"""The extension's name in ``scope["extensions"]`` and its message type."""

STALLED_CLIENT_SECONDS = 60.0
"""A client that takes no byte of a file for this long is disconnected."""

SENDING_THREADS = 64
"""Files sent at once per server; more wait for a thread after their response head."""

_DRAIN_POLL_SECONDS = 0.005
_STOP_POLL_SECONDS = 0.25
_senders: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, anyio.CapacityLimiter] = (
    weakref.WeakKeyDictionary()
)


class ZeroCopyHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, with ``http.response.zerocopysend`` on plain HTTP for
    requests under :attr:`path_prefix` (other requests pay nothing for it)."""

    path_prefix = "/"

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._plain = transport.get_extra_info("sslcontext") is None

    def _start_asgi_task(self, cycle: RequestResponseCycle, app: Any) -> None:
        if self._plain and cycle.scope["path"].startswith(self.path_prefix):
            cycle.scope.setdefault("extensions", {})[ZERO_COPY_SEND] = {}
            cycle.send = _ZeroCopySend(cycle)  # type: ignore[method-assign]
        super()._start_asgi_task(cycle, app)


def zero_copy_protocol(path_prefix: str) -> type[ZeroCopyHttpToolsProtocol]:
    """The protocol offering zero-copy sends to requests whose path starts with
    ``path_prefix`` (the file endpoint's)."""
    return type(
        ZeroCopyHttpToolsProtocol.__name__,
        (ZeroCopyHttpToolsProtocol,),
        {"path_prefix": path_prefix, "__module__": __name__},
    )


class _ZeroCopySend:
    """The ASGI ``send`` of one request: zero-copy messages here, the rest to uvicorn."""

    def __init__(self, cycle: RequestResponseCycle) -> None:
        self._cycle = cycle
        self._send = cycle.send

    async def __call__(self, message: Any) -> None:
        if message["type"] != ZERO_COPY_SEND:
            return await self._send(message)
        cycle = self._cycle
        if not cycle.response_started or cycle.response_complete:
            raise RuntimeError(f"unexpected ASGI message '{ZERO_COPY_SEND}'")
        if cycle.chunked_encoding:
            raise RuntimeError(f"'{ZERO_COPY_SEND}' needs a response with Content-Length")
        file_fd = message["file"].fileno()
        offset = message.get("offset")
        if offset is None:
            offset = os.lseek(file_fd, 0, os.SEEK_CUR)
        count = message.get("count")
        if count is None:
            count = os.fstat(file_fd).st_size - offset
        if cycle.scope["method"] != "HEAD" and not cycle.disconnected:
            if count > cycle.expected_content_length:
                raise RuntimeError("Response content longer than Content-Length")
            if not await self._send_file(file_fd, offset, count):
                return
            cycle.expected_content_length -= count
        more_body = bool(message.get("more_body", False))
        await self._send({"type": "http.response.body", "body": b"", "more_body": more_body})

    async def _send_file(self, file_fd: int, offset: int, count: int) -> bool:
        """Whether all ``count`` bytes went out; when the client went away or stalled, the
        connection is closed and the request counts as disconnected (as uvicorn does)."""
        transport = self._cycle.transport
        while transport.get_write_buffer_size():
            # the response head (or a pipelined answer before it) must leave first
            if self._cycle.disconnected:
                return False
            await asyncio.sleep(_DRAIN_POLL_SECONDS)
        # duplicates, owned by the sending thread: a connection or file closed meanwhile
        # cannot hand its number on to another
        job = _SendJob(os.dup(transport.get_extra_info("socket").fileno()), os.dup(file_fd))
        try:
            await anyio.to_thread.run_sync(
                job.run, offset, count, limiter=_sending_threads(), abandon_on_cancel=True
            )
        except anyio.get_cancelled_exc_class():
            job.cancel()  # the server is stopping (grace period over): so does the thread
            raise
        except (ConnectionError, TimeoutError):
            transport.close()
            self._cycle.disconnected = True
            return False
        return True


class _SendJob:
    """One file send in a worker thread, which owns both descriptors and closes them. A
    cancelled request stops it at its next wait for the socket (at most
    :data:`_STOP_POLL_SECONDS` later), so no thread outlives the server's shutdown grace
    period (a stalled client would otherwise hold one for :data:`STALLED_CLIENT_SECONDS`,
    or for good if it took a byte now and then); one cancelled before it started closes
    the descriptors itself."""

    def __init__(self, socket_fd: int, file_fd: int) -> None:
        self._fds = (socket_fd, file_fd)
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._state = "waiting"

    def run(self, offset: int, count: int) -> None:
        with self._lock:
            if self._state == "cancelled":
                return
            self._state = "running"
        try:
            _sendfile_all(*self._fds, offset, count, self._stop)
        finally:
            self._close()

    def cancel(self) -> None:
        self._stop.set()
        with self._lock:
            if self._state != "waiting":
                return
            self._state = "cancelled"
        self._close()

    def _close(self) -> None:
        for fd in self._fds:
            os.close(fd)


def _sending_threads() -> anyio.CapacityLimiter:
    """The limiter of the threads sending files for the running server (its event loop)."""
    loop = asyncio.get_running_loop()
    limiter = _senders.get(loop)
    if limiter is None:
        limiter = _senders[loop] = anyio.CapacityLimiter(SENDING_THREADS)
    return limiter


def _sendfile_all(
    socket_fd: int, file_fd: int, offset: int, count: int, stop: threading.Event
) -> None:
    """Send ``count`` bytes of the file from ``offset`` on the non-blocking socket (read
    and written in user space where the file system cannot ``sendfile``)."""
    writable = select.poll()
    writable.register(socket_fd, select.POLLOUT)
    end = offset + count
    while offset < end:
        if stop.is_set():
            raise TimeoutError("the request was cancelled")
        try:
            sent = os.sendfile(socket_fd, file_fd, offset, end - offset)
        except BlockingIOError:
            _wait(writable, stop)
            continue
        except OSError as exc:
            if exc.errno not in _NO_SENDFILE:
                raise
            sent = _copy(socket_fd, file_fd, offset, end - offset, writable, stop)
        if sent == 0:
            raise RuntimeError("the file is shorter than the response's Content-Length")
        offset += sent


_NO_SENDFILE = (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP)
_COPY_BYTES = 1024 * 1024


def _copy(
    socket_fd: int,
    file_fd: int,
    offset: int,
    count: int,
    writable: select.poll,
    stop: threading.Event,
) -> int:
    """Up to a megabyte of the file read and written to the socket: the bytes sent, 0 at
    the end of the file."""
    data = memoryview(os.pread(file_fd, min(count, _COPY_BYTES), offset))
    done = 0
    while done < len(data):
        try:
            done += os.write(socket_fd, data[done:])
        except BlockingIOError:
            _wait(writable, stop)
    return done


def _wait(writable: select.poll, stop: threading.Event) -> None:
    """Until the socket takes more; TimeoutError when the client stalls, or when ``stop``
    is set (the request was cancelled)."""
    waited = 0.0
    while not writable.poll(_STOP_POLL_SECONDS * 1000):
        waited += _STOP_POLL_SECONDS
        if stop.is_set() or waited >= STALLED_CLIENT_SECONDS:
            raise TimeoutError("the client took no bytes")
