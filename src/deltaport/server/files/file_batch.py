"""``POST {files path}``: many local table files in one answer (a deltaport extension,
its format in :mod:`deltaport.protocol.file_batch`).

A table of many small files costs a recipient one GET per file, and on both ends most of
that is the per-request work of Python HTTP stacks, not the bytes. Query and change
answers of tables served from local disk name this endpoint. Each URL of a batch is
checked as a GET of it would be (``403`` for a bad or expired signature, ``404``); nothing
else is needed, no bearer token, as with the GETs. The body itself gets ``400`` when
malformed (and ``413`` when bigger than the server's ``maxRequestBodyBytes``, as on every
route).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from urllib.parse import parse_qsl, unquote, urlsplit

import msgspec
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from deltaport.protocol.errors import ErrorBody
from deltaport.protocol.file_batch import (
    FILE_MAX_BYTES,
    MAX_FILES,
    MEDIA_TYPE,
    FileBatchRequest,
    frame_head,
)
from deltaport.server.files.local_files import FileError, LocalFiles, Part, read_part

CHUNK_BYTES = 1024 * 1024
"""Frames are sent in chunks of about this size: few sends, bounded memory."""


_decoder = msgspec.json.Decoder(FileBatchRequest)


class FileBatchEndpoint:
    """``POST {files path}``: :meth:`answer` is the Starlette endpoint."""

    def __init__(self, files: LocalFiles, files_path: str) -> None:
        self._files = files
        self._prefix = files_path.rstrip("/") + "/"
        """What the path of each file URL starts with (the host is not signed: any will
        do, as for the GETs)."""

    async def answer(self, request: Request) -> Response:
        body = await request.body()
        try:
            urls = _decoder.decode(body).files
        except (msgspec.ValidationError, msgspec.DecodeError, RecursionError) as exc:
            message = f'the body must be {{"files": [signed file URL, ...]}}: {exc}'
            return _error(400, "INVALID_PARAMETER_VALUE", message)
        if not 0 < len(urls) <= MAX_FILES:
            message = f"a batch names 1 to {MAX_FILES} files, not {len(urls)}"
            return _error(400, "INVALID_PARAMETER_VALUE", message)
        client = request.client.host if request.client else None
        return StreamingResponse(self._frames(urls, client), media_type=MEDIA_TYPE)

    def _frames(self, urls: list[str], client: str | None) -> Iterator[bytes]:
        """The frames of ``urls``, joined into chunks (run in a worker thread)."""
        pending: list[bytes] = []
        size = 0
        for url in urls:
            status, content = self._frame_of(url, client)
            pending += (frame_head(status, len(content)), content)
            size += len(content)
            if size >= CHUNK_BYTES:
                yield b"".join(pending)
                pending, size = [], 0
        if pending:
            yield b"".join(pending)

    def _frame_of(self, url: str, client: str | None) -> tuple[int, bytes]:
        try:
            return 200, self._read(url, client)
        except FileError as exc:
            return exc.status, msgspec.json.encode(ErrorBody(exc.code, exc.message))

    def _read(self, url: str, client: str | None) -> bytes:
        try:
            parts = urlsplit(url)
        except ValueError:  # a malformed host, such as "http://[x"
            parts = None
        if parts is None or not parts.path.startswith(self._prefix):
            raise FileError(403, "PERMISSION_DENIED", "not a file URL of this server")
        table_key, _, relative_path = parts.path[len(self._prefix) :].partition("/")
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        fd, stat_result, _ = self._files.open(
            unquote(table_key), unquote(relative_path), query, client
        )
        try:
            size = stat_result.st_size
            if size > FILE_MAX_BYTES:
                message = f"files over {FILE_MAX_BYTES} bytes are not sent in a batch: GET it"
                raise FileError(413, "INVALID_PARAMETER_VALUE", message)
            return read_part(fd, Part(0, size, ranged=False))
        finally:
            os.close(fd)


def _error(status: int, code: str, message: str) -> Response:
    body = msgspec.json.encode(ErrorBody(code, message))
    return Response(body, status_code=status, media_type="application/json")
