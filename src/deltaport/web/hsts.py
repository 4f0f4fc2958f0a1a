"""``Strict-Transport-Security`` on every answer given over TLS (both listeners): a browser
that has once reached the server over HTTPS never falls back to plain HTTP for it."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

HSTS = (b"strict-transport-security", b"max-age=31536000")


class StrictTransport:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("scheme") != "https":
            await self.app(scope, receive, send)
            return

        async def send_with_hsts(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), HSTS]
            await send(message)

        await self.app(scope, receive, send_with_hsts)
