"""Page and refresh tokens of table answers (``/query`` and ``/changes``).

A page token pins what the first page resolved (the snapshot version, or the range's
first and last version) and holds the offset of the next file, so the union of the pages
equals the unpaged answer even when the table gets new commits between pages. A refresh
token pins a snapshot version so a client can get fresh URLs for the same files. Both are
bound to the table and to a digest of the request's parameters (a token replayed on
another table or with other parameters is a 400) and expire.
"""

from __future__ import annotations

import hashlib
import time
from datetime import timedelta

import msgspec

from deltaport.protocol.errors import InvalidParameterError
from deltaport.server.paging.tokens import TokenSigner

PAGE_TOKEN_LIFETIME = timedelta(hours=24)
REFRESH_TOKEN_LIFETIME = timedelta(hours=24)
_PAGE = "table-page"
_REFRESH = "table-refresh"


class PageCursor(msgspec.Struct, array_like=True):
    table: str
    query: str
    start: int
    version: int
    offset: int


class RefreshCursor(msgspec.Struct, array_like=True):
    table: str
    query: str
    version: int


def query_digest(*parameters: object) -> str:
    """A short digest of the parameters a token is bound to."""
    return hashlib.sha256(msgspec.json.encode(parameters)).hexdigest()[:32]


def page_bounds(num_rows: int, offset: int, max_files: int | None) -> tuple[int, int]:
    """Rows ``[first, last)`` of the page starting at ``offset``."""
    if offset > num_rows:
        raise InvalidParameterError("pageToken points past the end of the answer")
    last = num_rows if max_files is None else min(num_rows, offset + max_files)
    return offset, last


class TableTokens:
    def __init__(
        self,
        signer: TokenSigner,
        page_lifetime: timedelta = PAGE_TOKEN_LIFETIME,
        refresh_lifetime: timedelta = REFRESH_TOKEN_LIFETIME,
    ) -> None:
        self._signer = signer
        self._page_lifetime = page_lifetime
        self._refresh_lifetime = refresh_lifetime

    def page_token(self, table: str, query: str, start: int, version: int, offset: int) -> str:
        expires_at = int(time.time() + self._page_lifetime.total_seconds())
        cursor = PageCursor(table, query, start, version, offset)
        return self._signer.seal(_PAGE, cursor, expires_at)

    def open_page(self, token: str, table: str, query: str) -> PageCursor:
        cursor = self._signer.open(_PAGE, token, PageCursor, "pageToken")
        _check_binding("pageToken", cursor.table, cursor.query, table, query)
        return cursor

    def refresh_token(self, table: str, query: str, version: int) -> str:
        expires_at = int(time.time() + self._refresh_lifetime.total_seconds())
        return self._signer.seal(_REFRESH, RefreshCursor(table, query, version), expires_at)

    def open_refresh(self, token: str, table: str, query: str) -> RefreshCursor:
        cursor = self._signer.open(_REFRESH, token, RefreshCursor, "refreshToken")
        _check_binding("refreshToken", cursor.table, cursor.query, table, query)
        return cursor


def _check_binding(name: str, token_table: str, token_query: str, table: str, query: str) -> None:
    if token_table != table:
        raise InvalidParameterError(f"{name} was issued for another table")
    if token_query != query:
        raise InvalidParameterError(
            f"{name} was issued for a request with other parameters; repeat the parameters "
            "of the first request"
        )
