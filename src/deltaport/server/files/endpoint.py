"""The endpoint serving local table files through the server's own signed URLs.

Only files of tables on local disk are served here (cloud tables hand out pre-signed URLs
of their object store). GET and HEAD answer with Content-Length, ETag, Last-Modified and
Accept-Ranges; single and multiple byte ranges (``bytes=a-b``, ``bytes=a-``,
``bytes=-n``) answer 206, unsatisfiable ones 416.

Recipients fetch data files one request each, so a table of many small files costs one
request per file: the endpoint is a plain ASGI app that answers a whole small file, or one
range of up to 1 MiB (parquet readers fetch footers and column chunks by range), from one
read on the event loop (no worker thread, no request or response objects). Bigger files
and ranges go out with ``os.sendfile`` where the server offers it (the ASGI zero-copy send
extension, see :mod:`deltaport.server.files.zero_copy`). The rest (several ranges, ``If-Range``,
unsatisfiable ranges, and big parts where there is no zero-copy send) is answered by
Starlette's ``FileResponse``, which streams in worker threads and stops when the client
goes away.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from collections.abc import Callable
from email.utils import formatdate
from urllib.parse import parse_qsl, urlsplit

import msgspec
from starlette.responses import FileResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from deltaport.protocol.errors import ErrorBody
from deltaport.server.files.file_batch import FileBatchEndpoint
from deltaport.server.files.local_files import Admit, FileError, LocalFiles, Part, read_part
from deltaport.server.files.zero_copy import ZERO_COPY_SEND
from deltaport.storage.local_urls import LocalUrlSigner
from deltaport.storage.uri import Location

_CHUNK_SIZE = 1024 * 1024
ONE_READ_MAX_BYTES = 1024 * 1024
"""Files up to this size (asked for whole) are read at once on the event loop."""

_METHODS = ("GET", "HEAD")
_CONTENT_TYPE = b"application/octet-stream"
_SINGLE_RANGE = re.compile(rb"bytes=(\d*)-(\d*)")
_MAX_DIGITS = 19
"""Range bounds longer than this are left to Starlette's ``FileResponse`` (``int()``
refuses the longest, over 4,300 digits: that was a 500)."""
_JSON = b"application/json"


class FileEndpoint:
    """The ASGI app behind ``{prefix}/{table_key}/{file_path:path}``."""

    def __init__(self, files: LocalFiles) -> None:
        self._files = files

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        table_key: str = scope["path_params"]["table_key"]
        relative_path: str = scope["path_params"]["file_path"]
        query = dict(parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True))
        try:
            client = scope.get("client")
            fd, stat_result, path = self._files.open(
                table_key, relative_path, query, client[0] if client else None
            )
        except FileError as exc:
            return await _error(send, exc.status, exc.code, exc.message)
        try:
            part = _requested_part(scope, stat_result.st_size)
            get = scope["method"] == "GET"
            if part is not None and get and part.length > ONE_READ_MAX_BYTES:
                if ZERO_COPY_SEND in scope.get("extensions", {}):
                    await send(_start(stat_result, part))
                    with open(fd, "rb", buffering=0, closefd=False) as file:
                        message = {"type": ZERO_COPY_SEND, "file": file, "offset": part.begin}
                        return await send({**message, "count": part.length})
                part = None  # streamed by FileResponse below
            elif part is not None and get:
                body = read_part(fd, part)
                part = part._replace(end=part.begin + len(body))  # shorter if the file shrank
            else:
                body = b""
        finally:
            os.close(fd)
        if part is None:
            response = FileResponse(
                path, stat_result=stat_result, media_type=_CONTENT_TYPE.decode()
            )
            response.chunk_size = _CHUNK_SIZE
            return await response(scope, receive, send)
        await send(_start(stat_result, part))
        await send({"type": "http.response.body", "body": body})


def files_routes(
    signer: LocalUrlSigner,
    resolve_table_root: Callable[[str], Location | None],
    prefix: str | None = None,
    admit: Admit | None = None,
) -> list[Route]:
    """Routes serving ``{prefix}/{table_key}/{path}``, and batches of files posted to
    ``{prefix}`` (:mod:`deltaport.server.files.file_batch`).

    ``prefix`` defaults to the path of ``signer.base_url``, so the URLs the signer makes
    land here. ``resolve_table_root`` maps a table key to the table's root location, or
    ``None`` when the key names no (longer) shared table; it is called on the event loop,
    so it must not block (a dictionary look-up).
    """
    files = LocalFiles(signer, resolve_table_root, admit)
    path = _route_prefix(signer, prefix)
    return [
        Route(path + "/{table_key}/{file_path:path}", FileEndpoint(files), methods=list(_METHODS)),
        Route(path, FileBatchEndpoint(files, path).answer, methods=["POST"]),
    ]


class FilesFirst:
    """ASGI middleware answering the GET and HEAD requests of files before routing: what
    :func:`files_routes` serves, without Starlette's routing and request objects (about a
    tenth of a millisecond of CPU less per file). Other requests go on to ``app``."""

    def __init__(
        self,
        app: ASGIApp,
        signer: LocalUrlSigner,
        resolve_table_root: Callable[[str], Location | None],
        prefix: str | None = None,
        admit: Admit | None = None,
    ) -> None:
        self._app = app
        self._endpoint = FileEndpoint(LocalFiles(signer, resolve_table_root, admit))
        self._start = _route_prefix(signer, prefix) + "/"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope.get("path", "")
        start = self._start
        if scope["type"] == "http" and path.startswith(start) and scope["method"] in _METHODS:
            table_key, _, file_path = path[len(start) :].partition("/")
            if table_key and file_path:
                path_params = {"table_key": table_key, "file_path": file_path}
                return await self._endpoint({**scope, "path_params": path_params}, receive, send)
        return await self._app(scope, receive, send)


def files_path(base_url: str) -> str:
    """The path (without a trailing slash) of the file URLs signed under ``base_url``."""
    return urlsplit(base_url).path.rstrip("/")


def _route_prefix(signer: LocalUrlSigner, prefix: str | None) -> str:
    return files_path(signer.base_url) if prefix is None else prefix.rstrip("/")


def _header(scope: Scope, name: bytes) -> bytes | None:
    return next((value for key, value in scope["headers"] if key.lower() == name), None)


def _requested_part(scope: Scope, size: int) -> Part | None:
    """The bytes asked for: the whole file without a Range header, or its one satisfiable
    range. ``None`` leaves the answer to Starlette's ``FileResponse`` (several ranges, an
    unsatisfiable or malformed one, or an ``If-Range`` to check)."""
    value = _header(scope, b"range")
    if value is None:
        return Part(0, size, ranged=False)
    if _header(scope, b"if-range") is not None:
        return None
    match = _SINGLE_RANGE.fullmatch(value.strip())
    if match is None:
        return None
    first, last = match.groups()
    if len(first) > _MAX_DIGITS or len(last) > _MAX_DIGITS:
        return None
    if first:
        begin, end = int(first), size if not last else min(int(last) + 1, size)
        if last and int(last) < begin:
            return None
    elif last and int(last) > 0:
        begin, end = max(size - int(last), 0), size
    else:
        return None
    return Part(begin, end, ranged=True) if begin < end else None


def _start(stat_result: os.stat_result, part: Part) -> Message:
    """The response head of ``part`` of the file."""
    headers = _headers(stat_result, part.length)
    if not part.ranged:
        return {"type": "http.response.start", "status": 200, "headers": headers}
    content_range = f"bytes {part.begin}-{part.end - 1}/{stat_result.st_size}".encode()
    headers.append((b"content-range", content_range))
    return {"type": "http.response.start", "status": 206, "headers": headers}


def _headers(stat_result: os.stat_result, length: int) -> list[tuple[bytes, bytes]]:
    return [
        (b"content-type", _CONTENT_TYPE),
        (b"accept-ranges", b"bytes"),
        (b"content-length", str(length).encode()),
        *_validators(stat_result.st_mtime, stat_result.st_size),
    ]


@functools.lru_cache(maxsize=4096)
def _validators(mtime: float, size: int) -> tuple[tuple[bytes, bytes], ...]:
    """Last-Modified and ETag as Starlette's ``FileResponse`` sets them (the same ETag,
    so ``If-Range`` of a later ranged request matches); table files never change, so
    they are computed once per file."""
    etag = hashlib.md5(f"{mtime}-{size}".encode(), usedforsecurity=False).hexdigest()
    return (
        (b"last-modified", formatdate(mtime, usegmt=True).encode()),
        (b"etag", f'"{etag}"'.encode()),
    )


async def _error(send: Send, status: int, code: str, message: str) -> None:
    body = msgspec.json.encode(ErrorBody(code, message))
    headers = [(b"content-type", _JSON), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
