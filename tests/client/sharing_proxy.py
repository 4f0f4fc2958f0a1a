"""A fault-injecting sharing server for client tests, run in-process with ``serve_asgi``.

It forwards the REST API to a real deltaport server and can, on demand: answer 429/503
bursts, cut a response in the middle of its body, drop or poison the ``endStreamAction``,
split query answers into ``maxFiles`` pages with page tokens and refresh tokens, and let
file URLs "expire" after some downloads (file URLs are rewritten to pass through it).
Everything else (``/changes`` included) is forwarded unchanged: the change feed is tested
against the real server's route (tests/client/test_client_changes.py).
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

NDJSON = "application/x-ndjson"


@dataclass
class Faults:
    """What to break; counters are consumed as faults fire."""

    statuses: list[int] = field(default_factory=list)
    """Statuses answered (in order) to the next REST calls, before forwarding again."""
    download_statuses: list[int] = field(default_factory=list)
    retry_after: str | None = None
    cut_responses: int = 0
    """Number of next query answers to cut half-way through their body."""
    cut_downloads: int = 0
    drop_end_action: bool = False
    end_error: str | None = None
    page_size: int | None = None
    """Split query answers asking ``maxFiles`` into pages of this many files."""
    refresh_token: bool = False
    """Hand out a refresh token on the last page (when asked)."""
    expire_after_downloads: int | None = None
    """After this many successful downloads, every URL handed out so far expires."""
    download_delay: float = 0.0
    """Seconds each download waits before it is answered (a slow store)."""


@dataclass
class Record:
    requests: list[tuple[str, str, dict[str, Any] | None, dict[str, str]]] = field(
        default_factory=list
    )
    downloads: Counter[str] = field(default_factory=Counter)
    refused_downloads: int = 0


class CutResponse(Response):
    """Announces the full length, sends half of the body, then stops."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = bytes(self.body)
        await send(
            {
                "type": "http.response.start",
                "status": self.status_code,
                "headers": [
                    *[(k, v) for k, v in self.raw_headers if k != b"content-length"],
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send(
            {"type": "http.response.body", "body": body[: len(body) // 2], "more_body": True}
        )


class SharingProxy:
    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.base = ""  # set once served
        self.faults = Faults()
        self.record = Record()
        self._lock = threading.Lock()
        self._generation = 0
        self._expired_below = 0
        self._successful_downloads = 0
        self._http = httpx.Client(timeout=60)

    def reset(self) -> None:
        with self._lock:
            self.faults = Faults()
            self.record = Record()
            self._successful_downloads = 0

    # -- app ---------------------------------------------------------------------------
    def app(self) -> Starlette:
        routes = [
            Route("/fwd/{generation:int}", self.download, methods=["GET"]),
            Route("/sharing/{rest:path}", self.api, methods=["GET", "POST", "HEAD"]),
        ]
        return Starlette(routes=routes)

    def _take_status(self, queue: list[int]) -> Response | None:
        with self._lock:
            if not queue:
                return None
            status = queue.pop(0)
        headers = {"Retry-After": self.faults.retry_after} if self.faults.retry_after else {}
        body = json.dumps({"errorCode": "TEMPORARILY_UNAVAILABLE", "message": f"fault {status}"})
        return Response(body, status, headers=headers, media_type="application/json")

    def api(self, request: Request) -> Response:
        path = "/" + request.path_params["rest"]
        raw = _sync_body(request)
        body = json.loads(raw) if raw.strip() else None
        self.record.requests.append(
            (request.method, path, body, dict(request.query_params.items()))
        )
        fault = self._take_status(self.faults.statuses)
        if fault is not None:
            return fault
        if self.faults.page_size is not None and body:
            # paging is emulated here: the server under test answers the whole query
            hidden = ("maxFiles", "pageToken", "refreshToken", "includeRefreshToken")
            raw = json.dumps({k: v for k, v in body.items() if k not in hidden}).encode()
        upstream = self._http.request(
            request.method,
            self.upstream + path,
            params=request.query_params,
            content=raw,
            headers={
                k: v
                for k, v in request.headers.items()
                if k.lower() in ("authorization", "delta-sharing-capabilities", "content-type")
            },
        )
        headers = {
            k: v
            for k, v in upstream.headers.items()
            if k.lower() in ("delta-table-version", "delta-sharing-capabilities", "content-type")
        }
        if upstream.status_code != 200 or not path.endswith("/query"):
            return Response(upstream.content, upstream.status_code, headers=headers)
        lines = [json.loads(line) for line in upstream.text.splitlines() if line]
        return self._finish(self._query_answer(lines, body or {}, headers))

    def _finish(self, response: Response) -> Response:
        with self._lock:
            cut = self.faults.cut_responses > 0
            if cut:
                self.faults.cut_responses -= 1
        if cut:
            return CutResponse(response.body, response.status_code, dict(response.headers))
        return response

    # -- query answers -----------------------------------------------------------------
    def _query_answer(
        self, lines: list[dict[str, Any]], body: dict[str, Any], headers: dict[str, str]
    ) -> Response:
        with self._lock:
            self._generation += 1
            generation = self._generation
        head = [line for line in lines if "protocol" in line or "metaData" in line]
        files = [self._rewrite(line, generation) for line in lines if "file" in line]
        end = next((line for line in lines if "endStreamAction" in line), None)
        if self.faults.page_size is not None and body.get("maxFiles"):
            size = min(self.faults.page_size, int(body["maxFiles"]))
            offset = int(body.get("pageToken") or 0)
            page = files[offset : offset + size]
            action: dict[str, Any] = {}
            if offset + size < len(files):
                action["nextPageToken"] = str(offset + size)
            elif self.faults.refresh_token and body.get("includeRefreshToken"):
                action["refreshToken"] = f"refresh-{generation}"
            files, end = page, {"endStreamAction": action}
            headers = {**headers, "delta-sharing-capabilities": _with_end(headers)}
        if self.faults.end_error is not None:
            end = {"endStreamAction": {"errorMessage": self.faults.end_error}}
        if self.faults.drop_end_action:
            end = None
        out = head + files + ([end] if end is not None else [])
        text = "".join(json.dumps(line) + "\n" for line in out)
        return Response(text, 200, headers=headers, media_type=NDJSON)

    def _rewrite(self, line: dict[str, Any], generation: int) -> dict[str, Any]:
        file = line["file"]
        if "url" in file:
            file["url"] = self.proxied(file["url"], generation)
            return line
        action = next(iter(file["deltaSingleAction"].values()))
        action["path"] = self.proxied(action["path"], generation)
        dv = action.get("deletionVector")
        if dv and dv.get("storageType") == "p":
            dv["pathOrInlineDv"] = self.proxied(dv["pathOrInlineDv"], generation)
        return line

    def proxied(self, url: str, generation: int) -> str:
        return f"{self.base}/fwd/{generation}?u={quote(url, safe='')}"

    # -- downloads ---------------------------------------------------------------------
    def download(self, request: Request) -> Response:
        generation = request.path_params["generation"]
        url = request.query_params["u"]
        with self._lock:
            expired = generation <= self._expired_below
            if expired:
                self.record.refused_downloads += 1
        if expired:
            return Response(b"<Error>Request has expired</Error>", 403)
        fault = self._take_status(self.faults.download_statuses)
        if fault is not None:
            return fault
        if self.faults.download_delay:
            time.sleep(self.faults.download_delay)
        headers = {"Range": request.headers["range"]} if "range" in request.headers else {}
        upstream = self._http.get(url, headers=headers)
        if upstream.status_code >= 300:
            return Response(upstream.content, upstream.status_code)
        key = urlsplit(url).path
        with self._lock:
            self.record.downloads[key] += 1
            self._successful_downloads += 1
            limit = self.faults.expire_after_downloads
            if limit is not None and self._successful_downloads >= limit:
                self._expired_below = self._generation
                self.faults.expire_after_downloads = None
            cut = self.faults.cut_downloads > 0
            if cut:
                self.faults.cut_downloads -= 1
        response_headers = {
            k: v for k, v in upstream.headers.items() if k.lower() in ("content-range",)
        }
        response = Response(upstream.content, upstream.status_code, headers=response_headers)
        return (
            CutResponse(response.body, response.status_code, response_headers) if cut else response
        )


def _with_end(headers: dict[str, str]) -> str:
    value = headers.get("delta-sharing-capabilities", "responseformat=parquet")
    return value if "includeendstreamaction" in value else value + ";includeendstreamaction=true"


def _sync_body(request: Request) -> bytes:
    """The request body, read from a sync endpoint (Starlette runs it in a thread)."""
    import anyio.from_thread

    return anyio.from_thread.run(request.body)
