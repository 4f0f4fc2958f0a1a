"""Asynchronous queries (``asyncquery=true``): submit a snapshot query with an idempotency
key, poll Get Query Info (``POST .../queries/{queryId}``) until its files are ready, then
ask for its pages there. A server that does not know the capability answers the
submission synchronously, which is used as it is.

Whether to ask: always when told to; by default (``None``) when the table is known to hold
at least ``ASYNC_MIN_FILES`` (100,000) files, from an earlier answer in this process (a
metadata answer's ``numFiles``, or the files of an earlier snapshot query).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from deltaport.client.base.errors import ResponseError, SharingError
from deltaport.client.base.models import Table
from deltaport.client.remote.rest import LinesResponse, RestClient, path_segment

ASYNC_MIN_FILES = 100_000
"""Tables of at least this many files are queried asynchronously by default."""
ASYNC_CAPABILITY = "asyncquery=true"
FIRST_POLL_DELAY = 0.05
MAX_POLL_DELAY = 2.0
ASYNC_QUERY_TIMEOUT = 3600.0
"""Seconds a query may stay pending before the client gives up."""

_KNOWN_SIZES = 4096
_sizes: OrderedDict[tuple[str, Table], int] = OrderedDict()
_sizes_lock = threading.Lock()


def remember_size(endpoint: str, table: Table, num_files: int | None) -> None:
    """Note how many files ``table`` holds (from an answer of its server)."""
    if num_files is None:
        return
    with _sizes_lock:
        _sizes[(endpoint, table)] = num_files
        _sizes.move_to_end((endpoint, table))
        while len(_sizes) > _KNOWN_SIZES:
            _sizes.popitem(last=False)


def wants_async(endpoint: str, table: Table, async_query: bool | None) -> bool:
    """Whether a snapshot query of ``table`` asks for ``asyncquery=true``."""
    if async_query is not None:
        return async_query
    with _sizes_lock:
        return _sizes.get((endpoint, table), 0) >= ASYNC_MIN_FILES


def _status(answer: LinesResponse) -> dict[str, Any] | None:
    """The ``queryStatus`` of an answer that is one (None: the answer holds the files)."""
    if len(answer.lines) != 1 or not answer.lines[0].lstrip().startswith(b'{"queryStatus"'):
        return None
    try:
        line = msgspec.json.decode(answer.lines[0])
    except msgspec.DecodeError as exc:
        raise ResponseError(f"the server sent a line that is not JSON: {exc}") from None
    status = line.get("queryStatus") if isinstance(line, dict) else None
    if not isinstance(status, dict) or not isinstance(status.get("queryId"), str):
        raise ResponseError(f"unexpected query status {answer.lines[0][:200]!r}")
    return status


class AsyncQuery:
    """One snapshot query, asynchronous when the server agrees."""

    def __init__(
        self,
        rest: RestClient,
        path: str,
        headers: Mapping[str, str],
        *,
        sleep: Callable[[float], object] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        timeout: float = ASYNC_QUERY_TIMEOUT,
    ) -> None:
        self._rest = rest
        self._path = path
        self._headers = {**headers, "delta-sharing-capabilities": _with_async(headers)}
        self._sleep = sleep
        self._clock = clock
        self._timeout = timeout
        self.query_id: str | None = None
        self.polls = 0

    def first_page(self, body: Mapping[str, Any]) -> LinesResponse:
        """Submit the query; its first page (the synchronous answer of a server that
        answered at once)."""
        submitted = {**body, "idempotencyKey": uuid.uuid4().hex}
        answer = self._rest.lines(
            "POST", self._path + "/query", json=submitted, headers=self._headers
        )
        status = _status(answer)
        if status is None:
            return answer
        self.query_id = status["queryId"]
        return self._ready({"maxFiles": body.get("maxFiles")})

    def next_page(self, page_token: str, max_files: int | None) -> LinesResponse:
        return self._ready({"maxFiles": max_files, "pageToken": page_token})

    def _ready(self, body: dict[str, Any]) -> LinesResponse:
        assert self.query_id is not None
        path = f"{self._path}/queries/{path_segment(self.query_id)}"
        clean = {k: v for k, v in body.items() if v is not None}
        started, delay = self._clock(), FIRST_POLL_DELAY
        while True:
            answer = self._rest.lines("POST", path, json=clean, headers=self._headers)
            self.polls += 1
            status = _status(answer)
            if status is None:
                return answer
            if status["queryId"] != self.query_id:
                raise ResponseError("the server answered a poll with another query's status")
            if status.get("status") == "failed":
                raise SharingError(
                    f"the asynchronous query failed: {status.get('errorMessage') or 'no reason'}",
                    error_code=status.get("errorCode"),
                )
            if self._clock() - started > self._timeout:
                raise SharingError(
                    f"the asynchronous query was not ready within {self._timeout:.0f} s"
                )
            self._sleep(delay)
            delay = min(delay * 2, MAX_POLL_DELAY)


def _with_async(headers: Mapping[str, str]) -> str:
    current = headers.get("delta-sharing-capabilities", "")
    return f"{current};{ASYNC_CAPABILITY}" if current else ASYNC_CAPABILITY
