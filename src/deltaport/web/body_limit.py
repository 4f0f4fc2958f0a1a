"""A bound on the size of every request body (``maxRequestBodyBytes``).

A body announced bigger than the bound is refused before it is read; one sent without a
length (chunked) is refused as soon as what has arrived passes the bound. Either way the
answer is ``413`` with errorCode ``REQUEST_TOO_LARGE``, and no route sees the body.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from deltaport.protocol.errors import RequestTooLargeError, SharingError


class BodyLimit:
    """ASGI middleware refusing bodies over ``limit`` bytes on every route. ``shape`` gives
    the error's JSON body for a path (default: ``{"errorCode", "message"}``)."""

    def __init__(
        self,
        app: ASGIApp,
        limit: int,
        shape: Callable[[str, SharingError], object] | None = None,
    ) -> None:
        self.app = app
        self.limit = limit
        self.shape = shape

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if _declared_length(scope) > self.limit:
            await refuse(self._error(), send, self._body(scope, self._error()))
            return
        received = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    raise self._error()
            return message

        async def watched_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited_receive, watched_send)
        except RequestTooLargeError as exc:
            if started:
                raise
            await refuse(exc, send, self._body(scope, exc))

    def _body(self, scope: Scope, error: SharingError) -> object:
        return error.body() if self.shape is None else self.shape(scope["path"], error)

    def _error(self) -> RequestTooLargeError:
        return RequestTooLargeError(
            f"the request body is larger than {self.limit} bytes (maxRequestBodyBytes)"
        )


def _declared_length(scope: Scope) -> int:
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return 0  # the HTTP server refuses it before us; count what arrives
    return 0


async def refuse(error: SharingError, send: Send, body: object = None) -> None:
    """Answer ``error`` (as ``body``, by default its own) and close the connection (what is
    left of the request is not read)."""
    payload = msgspec.json.encode(error.body() if body is None else body)
    await send(
        {
            "type": "http.response.start",
            "status": error.status,
            "headers": [
                (b"content-type", b"application/json; charset=utf-8"),
                (b"content-length", str(len(payload)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})
