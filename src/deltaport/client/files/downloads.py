"""GETs of pre-signed file URLs (and POSTs of file batches) with little Python work per
request.

A table of many small files costs one GET per file, and ``httpx.Client`` spends about
a millisecond of CPU per request on its own layers (URL validation character by
character, request and response models, the h11 state machine): several times the cost
of decoding a small file. ``Downloads`` sends a plain GET on a leaner path and
builds no ``httpx`` model for a successful answer:

- ``http://`` URLs (a sharing server's own file endpoint) go over keep-alive
  ``http.client`` connections, about a third of the CPU of ``httpx``;
- ``https://`` URLs go straight to the connection pool under the ``httpx.Client``, so
  its TLS settings and connections are the ones used.

Whatever those paths do not handle as ``httpx.Client`` would is sent through the client
itself: a client with proxies or another transport, URLs with credentials, redirects,
and encoded (compressed) bodies. Transport failures are raised as the ``httpx`` errors
they stand for.
"""

from __future__ import annotations

import http.client
import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpcore
import httpx

_TRANSPORT_ERRORS: Mapping[type[Exception], type[httpx.TransportError]] = {
    httpcore.ConnectTimeout: httpx.ConnectTimeout,
    httpcore.ReadTimeout: httpx.ReadTimeout,
    httpcore.WriteTimeout: httpx.WriteTimeout,
    httpcore.PoolTimeout: httpx.PoolTimeout,
    httpcore.ConnectError: httpx.ConnectError,
    httpcore.ReadError: httpx.ReadError,
    httpcore.WriteError: httpx.WriteError,
    httpcore.RemoteProtocolError: httpx.RemoteProtocolError,
    httpcore.LocalProtocolError: httpx.LocalProtocolError,
    httpcore.ProxyError: httpx.ProxyError,
    httpcore.UnsupportedProtocol: httpx.UnsupportedProtocol,
    httpcore.NetworkError: httpx.NetworkError,
    httpcore.TimeoutException: httpx.TimeoutException,
    httpcore.ProtocolError: httpx.ProtocolError,
    TimeoutError: httpx.ReadTimeout,
    ConnectionRefusedError: httpx.ConnectError,
    http.client.HTTPException: httpx.RemoteProtocolError,
    OSError: httpx.ReadError,
}
"""Errors of httpcore and ``http.client`` as the httpx errors ``httpx.Client`` raises for
them (all retried as transport errors)."""

_STALE_CONNECTION = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError)
"""How a keep-alive connection the server closed while idle fails on its next request."""

Headers = list[tuple[bytes, bytes]]


@dataclass(frozen=True)
class Body:
    """A successful (2xx) answer: its status and bytes."""

    status: int
    content: bytes


@dataclass(frozen=True)
class _Request:
    method: str
    url: str
    headers: dict[str, str]
    content: bytes | None = None


@dataclass(frozen=True)
class _Answer:
    status: int
    headers: Headers
    content: bytes


class Downloads:
    """GETs of file URLs for one ``httpx.Client`` (see the module's documentation)."""

    def __init__(self, http: httpx.Client) -> None:
        self._http = weakref.ref(http)  # not a strong one: instances are kept per client
        self._pool = direct_pool(http)
        self._extensions = {"timeout": http.timeout.as_dict()}
        agent = http.headers.get("user-agent")
        self._headers = [(b"User-Agent", agent.encode())] if agent else []
        self._plain = _PlainConnections(http.timeout.read, agent)
        weakref.finalize(self, self._plain.close)

    def get(self, url: str, byte_range: str | None = None) -> Body | httpx.Response:
        """The answer to a GET of ``url`` (``byte_range`` is a Range header value): a
        ``Body`` when it succeeded, else the ``httpx.Response``."""
        headers = {"Range": byte_range} if byte_range is not None else {}
        return self._send(_Request("GET", url, headers))

    def post(self, url: str, content: bytes, content_type: str) -> Body | httpx.Response:
        """The answer to a POST of ``content`` to ``url``, as ``get`` gives it."""
        return self._send(_Request("POST", url, {"Content-Type": content_type}, content))

    def _send(self, request: _Request) -> Body | httpx.Response:
        url = request.url
        if self._pool is None:
            return self._through_client(request)
        try:
            if url.startswith("http://") and "@" not in url[7:].split("/", 1)[0]:
                answer = self._plain.send(request)
            elif url.startswith("https://"):
                answer = self._pooled(self._pool, request)
            else:
                return self._through_client(request)
        except Exception as exc:
            error = _httpx_error(exc)
            if error is None:
                raise
            raise error from exc
        status = answer.status
        if status < 300 and not _encoded(answer.headers):
            return Body(status, answer.content)
        if status < 400:  # a redirect, or a compressed body: httpx follows and decodes
            return self._through_client(request)
        return httpx.Response(
            status,
            headers=answer.headers,
            content=answer.content,
            request=httpx.Request(request.method, url),
        )

    def _pooled(self, pool: httpcore.ConnectionPool, request: _Request) -> _Answer:
        headers = [*self._headers, *((k.encode(), v.encode()) for k, v in request.headers.items())]
        response = pool.request(
            request.method,
            request.url,
            headers=headers,
            content=request.content,
            extensions=self._extensions,
        )
        return _Answer(response.status, response.headers, response.content)

    def _through_client(self, request: _Request) -> Body | httpx.Response:
        http = self._http()
        if http is None:
            raise RuntimeError("the HTTP client of these downloads was garbage-collected")
        response = http.request(
            request.method, request.url, headers=request.headers or None, content=request.content
        )
        if 200 <= response.status_code < 300:
            return Body(response.status_code, response.content)
        return response


_SHARED: weakref.WeakKeyDictionary[httpx.Client, Downloads] = weakref.WeakKeyDictionary()
_SHARED_LOCK = threading.Lock()


def downloads_for(http: httpx.Client) -> Downloads:
    """The ``Downloads`` of ``http``, shared by every read using that client (so its
    connections are kept from one file to the next)."""
    with _SHARED_LOCK:
        downloads = _SHARED.get(http)
        if downloads is None:
            downloads = _SHARED[http] = Downloads(http)
        return downloads


class _PlainConnections:
    """Keep-alive ``http.client`` connections to plain HTTP hosts, shared by threads:
    each request takes an idle one (or opens one) and gives it back when done."""

    def __init__(self, timeout: float | None, user_agent: str | None) -> None:
        self._timeout = timeout
        self._headers = {"User-Agent": user_agent} if user_agent else {}
        self._idle: dict[tuple[str, int], list[http.client.HTTPConnection]] = {}
        self._lock = threading.Lock()

    def send(self, request: _Request) -> _Answer:
        parts = urlsplit(request.url)
        host = parts.hostname or ""
        key = (host, parts.port or 80)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        headers = {**self._headers, **request.headers} if request.headers else self._headers
        while True:
            connection, reused = self._take(key)
            try:
                connection.request(request.method, target, request.content, headers)
                response = connection.getresponse()
                content = response.read()
            except _STALE_CONNECTION:
                connection.close()
                if reused:
                    continue  # the server closed it while idle: once more on a new one
                raise
            except BaseException:
                connection.close()
                raise
            if response.will_close:
                connection.close()
            else:
                with self._lock:
                    self._idle.setdefault(key, []).append(connection)
            headers_out = [
                (k.encode("latin-1"), v.encode("latin-1")) for k, v in response.getheaders()
            ]
            return _Answer(response.status, headers_out, content)

    def _take(self, key: tuple[str, int]) -> tuple[http.client.HTTPConnection, bool]:
        with self._lock:
            idle = self._idle.get(key)
            if idle:
                return idle.pop(), True
        return http.client.HTTPConnection(key[0], key[1], timeout=self._timeout), False

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, {}
        for connections in idle.values():
            for connection in connections:
                connection.close()


def direct_pool(http: httpx.Client) -> httpcore.ConnectionPool | None:
    """The connection pool of a plain client: no proxy or other mounted transport, and
    httpx's own transport over a plain pool (found through httpx's private attributes;
    None when they change, so the client is then used as it is)."""
    transport = getattr(http, "_transport", None)
    mounts = getattr(http, "_mounts", None)
    if type(transport) is not httpx.HTTPTransport or mounts != {}:
        return None
    pool = getattr(transport, "_pool", None)
    return pool if type(pool) is httpcore.ConnectionPool else None


def _encoded(headers: Headers) -> bool:
    return any(
        key.lower() == b"content-encoding" and value.strip().lower() != b"identity"
        for key, value in headers
    )


def _httpx_error(exc: Exception) -> httpx.TransportError | None:
    for cls in type(exc).__mro__:
        error_type = _TRANSPORT_ERRORS.get(cls)
        if error_type is not None:
            return error_type(str(exc) or repr(exc))
    return None
