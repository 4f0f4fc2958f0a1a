"""A fault-injecting HTTP proxy in front of an object store emulator (moto's S3, Azurite).

The server under test is pointed at the proxy (``aws_endpoint`` / ``azure_endpoint``); the
proxy forwards every request to the emulator unchanged, except that on demand it answers
bursts of 5xx, holds answers back longer than the client's timeout, or trickles bodies out
slowly. It counts what it forwarded and what it broke, so tests assert on counts, not time.
"""

from __future__ import annotations

import http.client
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "proxy-connection"}


@dataclass
class StorageFaults:
    """What to break; counters are consumed as faults fire (reads only: GET and HEAD)."""

    statuses: list[int] = field(default_factory=list)
    """Statuses answered (in order) to the next reads instead of forwarding them."""
    hangs: int = 0
    """Number of next reads held back for ``hang_seconds`` before they are forwarded."""
    hang_seconds: float = 5.0
    slow_reads: int = 0
    """Number of next reads whose body leaves in small pieces with pauses between them."""
    slow_piece: int = 512
    slow_pause: float = 0.005
    only: str = ""
    """Break only reads whose path holds this text (``.parquet``: the recipients' downloads,
    not the server's reads of the log)."""


@dataclass
class StorageRecord:
    forwarded: int = 0
    failed: int = 0
    hung: int = 0
    slowed: int = 0
    paths: list[str] = field(default_factory=list)


class FaultyStorageProxy:
    """``endpoint`` forwards to ``upstream`` (``http://host:port``) with ``faults``."""

    def __init__(self, upstream: str) -> None:
        self.upstream = urlsplit(upstream)
        self.faults = StorageFaults()
        self.record = StorageRecord()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def reset(self) -> None:
        with self._lock:
            self.faults = StorageFaults()
            self.record = StorageRecord()

    def _take(self, method: str, path: str) -> tuple[int | None, bool, bool]:
        """The fault for the next request: (status to answer, hang, slow)."""
        if method not in ("GET", "HEAD"):
            return None, False, False
        with self._lock:
            if self.faults.only not in path:
                return None, False, False
            if self.faults.statuses:
                self.record.failed += 1
                return self.faults.statuses.pop(0), False, False
            if self.faults.hangs:
                self.faults.hangs -= 1
                self.record.hung += 1
                return None, True, False
            if self.faults.slow_reads:
                self.faults.slow_reads -= 1
                self.record.slowed += 1
                return None, False, True
            return None, False, False

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def _forward(self) -> None:
                try:
                    self._answer()
                except OSError:
                    self.close_connection = True  # the client gave up on a held answer

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                status, hang, slow = proxy._take(self.command, self.path)
                if status is not None:
                    payload = b"<Error><Code>InternalError</Code></Error>"
                    self.send_response(status)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                if hang:
                    time.sleep(proxy.faults.hang_seconds)
                upstream = http.client.HTTPConnection(
                    proxy.upstream.hostname, proxy.upstream.port, timeout=30
                )
                try:
                    headers = {
                        k: v for k, v in self.headers.items() if k.lower() not in HOP_HEADERS
                    }
                    upstream.request(self.command, self.path, body=body, headers=headers)
                    answer = upstream.getresponse()
                    data = answer.read()
                finally:
                    upstream.close()
                with proxy._lock:
                    proxy.record.forwarded += 1
                    proxy.record.paths.append(self.path)
                self.send_response(answer.status)
                for key, value in answer.getheaders():
                    if key.lower() not in HOP_HEADERS and key.lower() != "content-length":
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command == "HEAD":
                    return
                if not slow:
                    self.wfile.write(data)
                    return
                for start in range(0, len(data), proxy.faults.slow_piece):
                    self.wfile.write(data[start : start + proxy.faults.slow_piece])
                    self.wfile.flush()
                    time.sleep(proxy.faults.slow_pause)

            do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = _forward

        return Handler

    @contextmanager
    def running(self) -> Iterator[FaultyStorageProxy]:
        self._thread.start()
        try:
            yield self
        finally:
            self._server.shutdown()
            self._server.server_close()
