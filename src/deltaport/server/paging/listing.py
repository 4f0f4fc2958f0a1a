"""Page tokens for the listing routes.

A token holds the offset of the next item and the listing it belongs to, signed with the
server's key (the token format of :mod:`deltaport.server.paging.tokens`, shared with the table
page and refresh tokens): a forged token, or one taken from another listing (another share
or route) or handed to another recipient or bearer token, is rejected with 400 instead of
silently paging something else.

``maxResults=0`` asks for no items: the answer has none and no ``nextPageToken`` (the
protocol allows either; a token to the same offset would page forever).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import timedelta
from typing import TypeVar

from deltaport.protocol.errors import InvalidParameterError
from deltaport.server.paging.tokens import TokenSigner

T = TypeVar("T")

DEFAULT_MAX_RESULTS = 500
LISTING_TOKEN_LIFETIME = timedelta(hours=24)
_PURPOSE = "listing-page"


class PageTokens:
    def __init__(self, key: bytes) -> None:
        self._signer = TokenSigner(key)

    def encode(self, scope: str, offset: int) -> str:
        expires_at = int(time.time() + LISTING_TOKEN_LIFETIME.total_seconds())
        return self._signer.seal(_PURPOSE, (scope, offset), expires_at)

    def decode(self, scope: str, token: str) -> int:
        token_scope, offset = self._signer.open(_PURPOSE, token, tuple[str, int], "pageToken")
        if token_scope != scope:
            raise InvalidParameterError("pageToken is not valid for this request")
        return offset

    def page(
        self, scope: str, items: Sequence[T], max_results: int | None, page_token: str | None
    ) -> tuple[list[T], str | None]:
        """One page of ``items`` and the token of the next page (None at the end, or when
        ``max_results`` is 0). ``scope`` names the listing and who it is for."""
        start = self.decode(scope, page_token) if page_token else 0
        limit = DEFAULT_MAX_RESULTS if max_results is None else max_results
        if limit < 0:
            raise InvalidParameterError("maxResults must not be negative")
        if limit == 0:
            return [], None
        end = start + limit
        next_token = self.encode(scope, end) if end < len(items) else None
        return list(items[start:end]), next_token
