"""Pages and refresh tokens of snapshot queries (``/query`` without ``startingVersion``).

A ``pageToken`` or ``refreshToken`` pins the snapshot version the first request resolved;
the selection (hints, limit) is recomputed on that version, which gives the same files in
the same order, so offsets stay valid. Refresh tokens are only given on latest-snapshot
queries: a time-travel query can be repeated as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from deltaport.catalog.model import SharedTable
from deltaport.protocol.actions import EndStreamAction, QueryTableRequest
from deltaport.protocol.capabilities import Capabilities
from deltaport.protocol.errors import InvalidParameterError
from deltaport.server.paging.table_pages import TableTokens, page_bounds, query_digest


@dataclass(frozen=True)
class SnapshotPin:
    """``version`` is fixed by a page or refresh token (None: resolve as asked)."""

    version: int | None
    offset: int
    digest: str


@dataclass(frozen=True)
class SnapshotPage:
    files: pa.Table
    end: EndStreamAction | None


class SnapshotPages:
    def __init__(self, tokens: TableTokens) -> None:
        self._tokens = tokens

    def pin(
        self, table: SharedTable, request: QueryTableRequest, caps: Capabilities
    ) -> SnapshotPin:
        digest = query_digest(
            "snapshot",
            table.scope,
            request.predicateHints,
            request.jsonPredicateHints,
            request.limitHint,
            request.version,
            request.timestamp,
            caps.response_formats,
        )
        travelled = request.version is not None or request.timestamp is not None
        if (request.refreshToken or request.includeRefreshToken) and travelled:
            raise InvalidParameterError(
                "refresh tokens are only supported on queries of the latest snapshot"
            )
        if request.refreshToken and request.pageToken:
            raise InvalidParameterError(
                "refreshToken renews the first page; it cannot be combined with pageToken"
            )
        if request.refreshToken:
            refresh = self._tokens.open_refresh(request.refreshToken, table.key, digest)
            return SnapshotPin(refresh.version, 0, digest)
        if request.pageToken:
            page = self._tokens.open_page(request.pageToken, table.key, digest)
            return SnapshotPin(page.version, page.offset, digest)
        return SnapshotPin(None, 0, digest)

    def page(
        self,
        table: SharedTable,
        request: QueryTableRequest,
        caps: Capabilities,
        pin: SnapshotPin,
        version: int,
        files: pa.Table,
    ) -> SnapshotPage:
        """The files of this page and the end-of-stream action to send (None: none)."""
        first, last = page_bounds(files.num_rows, pin.offset, request.maxFiles)
        next_token = None
        if last < files.num_rows:
            next_token = self._tokens.page_token(table.key, pin.digest, version, version, last)
        refresh_token = None
        if (request.includeRefreshToken or request.refreshToken) and not request.pageToken:
            refresh_token = self._tokens.refresh_token(table.key, pin.digest, version)
        paged = request.maxFiles is not None or request.pageToken is not None
        end = None
        if caps.include_end_stream_action or paged or refresh_token is not None:
            end = EndStreamAction(refreshToken=refresh_token, nextPageToken=next_token)
        return SnapshotPage(files.slice(first, last - first), end)
