"""Page tokens for the listing routes.

A token holds the offset of the next item and the listing it belongs to, signed with the
server's key: a forged token, or one taken from another listing (another share or route),
is rejected with 400 instead of silently paging something else.
"""

from __future__ import annotations

import base64
import hmac
from collections.abc import Sequence
from typing import TypeVar

from deltaport.protocol.errors import InvalidParameterError

T = TypeVar("T")

DEFAULT_MAX_RESULTS = 500
_MAC_BYTES = 16


class PageTokens:
    def __init__(self, key: bytes) -> None:
        self._key = key

    def _mac(self, scope: str, offset: int) -> bytes:
        message = f"page\0{scope}\0{offset}".encode()
        return hmac.digest(self._key, message, "sha256")[:_MAC_BYTES]

    def encode(self, scope: str, offset: int) -> str:
        raw = offset.to_bytes(8, "big") + self._mac(scope, offset)
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

    def decode(self, scope: str, token: str) -> int:
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        except ValueError:
            raw = b""
        if len(raw) == 8 + _MAC_BYTES:
            offset = int.from_bytes(raw[:8], "big")
            if hmac.compare_digest(raw[8:], self._mac(scope, offset)):
                return offset
        raise InvalidParameterError("pageToken is not valid for this request")

    def page(
        self, scope: str, items: Sequence[T], max_results: int | None, page_token: str | None
    ) -> tuple[list[T], str | None]:
        """One page of ``items`` and the token of the next page (None at the end)."""
        start = self.decode(scope, page_token) if page_token else 0
        limit = DEFAULT_MAX_RESULTS if max_results is None else max_results
        if limit < 0:
            raise InvalidParameterError("maxResults must be non-negative")
        end = start + limit
        next_token = self.encode(scope, end) if end < len(items) else None
        return list(items[start:end]), next_token
