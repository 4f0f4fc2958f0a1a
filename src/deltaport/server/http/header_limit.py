"""A bound on the size of a request's headers (:data:`MAX_HEADER_BYTES`).

The HTTP server hands over headers of any size; a request whose header names and values
add up to more than the bound is answered ``431`` with errorCode
``REQUEST_HEADER_TOO_LARGE`` before any route, authentication included, looks at them.
Nothing of such a request is kept.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from deltaport.protocol.errors import RequestHeaderTooLargeError
from deltaport.server.http.body_limit import refuse

MAX_HEADER_BYTES = 16 * 1024


class HeaderLimit:
    """ASGI middleware refusing requests whose headers pass ``limit`` bytes."""

    def __init__(self, app: ASGIApp, limit: int = MAX_HEADER_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and _header_bytes(scope) > self.limit:
            await refuse(
                RequestHeaderTooLargeError(
                    f"the request headers are larger than {self.limit} bytes"
                ),
                send,
            )
            return
        await self.app(scope, receive, send)


def _header_bytes(scope: Scope) -> int:
    return sum(len(name) + len(value) for name, value in scope["headers"])
