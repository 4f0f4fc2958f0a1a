"""The endpoint serving local table files through the server's own signed URLs.

Only files of tables on local disk are served here (cloud tables hand out pre-signed URLs
of their object store). GET and HEAD answer with Content-Length, ETag, Last-Modified and
Accept-Ranges; single and multiple byte ranges (``bytes=a-b``, ``bytes=a-``,
``bytes=-n``) answer 206, unsatisfiable ones 416.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route

from deltaport.storage.local_urls import (
    InvalidSignatureError,
    LocalUrlSigner,
    PathEscapeError,
    resolve_local_file,
)
from deltaport.storage.uri import Location

_CHUNK_SIZE = 1024 * 1024


def files_routes(
    signer: LocalUrlSigner,
    resolve_table_root: Callable[[str], Location | None],
    prefix: str | None = None,
) -> list[Route]:
    """Routes serving ``{prefix}/{table_key}/{path}``.

    ``prefix`` defaults to the path of ``signer.base_url``, so the URLs the signer makes
    land here. ``resolve_table_root`` maps a table key to the table's root location, or
    ``None`` when the key names no (longer) shared table; it may block (it runs in a
    worker thread).
    """
    route_prefix = (urlsplit(signer.base_url).path if prefix is None else prefix).rstrip("/")

    def serve_file(request: Request) -> Response:
        table_key: str = request.path_params["table_key"]
        relative_path: str = request.path_params["file_path"]
        try:
            signer.verify(table_key, relative_path, request.query_params)
        except InvalidSignatureError as exc:
            return _error(403, "PERMISSION_DENIED", str(exc))
        root = resolve_table_root(table_key)
        if root is None or root.kind != "local":
            return _error(404, "RESOURCE_DOES_NOT_EXIST", "the table is not served here")
        try:
            path = resolve_local_file(root, relative_path)
        except PathEscapeError as exc:
            return _error(403, "PERMISSION_DENIED", str(exc))
        try:
            stat_result = os.stat(path)
        except OSError:
            return _error(404, "RESOURCE_DOES_NOT_EXIST", "the file does not exist")
        if not stat.S_ISREG(stat_result.st_mode):
            return _error(404, "RESOURCE_DOES_NOT_EXIST", "the file does not exist")
        response = FileResponse(
            path, stat_result=stat_result, media_type="application/octet-stream"
        )
        response.chunk_size = _CHUNK_SIZE
        return response

    return [
        Route(
            route_prefix + "/{table_key}/{file_path:path}",
            serve_file,
            methods=["GET", "HEAD"],
            name="table_file",
        )
    ]


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"errorCode": code, "message": message}, status_code=status)
