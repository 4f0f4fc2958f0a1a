"""Login, logout and the session check in front of every console page."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from deltaport.admin.tokens import AdminTokens
from deltaport.console.render import page
from deltaport.console.sessions import (
    LOGIN_CSRF_COOKIE,
    SESSION_COOKIE,
    Sessions,
    new_login_csrf,
    same_token,
)
from deltaport.protocol.errors import TooManyRequestsError
from deltaport.web.failed_auth import FailedAuthLimit, client_address

PREFIX = "/console"
MAX_FORM_BYTES = 64 * 1024

Handler = Callable[[Request], Awaitable[Response]]


async def form(request: Request) -> dict[str, str]:
    """An ``application/x-www-form-urlencoded`` body (first value of each field)."""
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            return {}
    fields = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
    return {k: v[0] for k, v in fields.items()}


def _cookie(response: Response, request: Request, name: str, value: str, max_age: int) -> None:
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        path=PREFIX,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


class ConsoleAuth:
    def __init__(
        self,
        tokens: AdminTokens,
        sessions: Sessions,
        limit: FailedAuthLimit,
        manages: bool = False,
    ) -> None:
        """``manages``: the console has the catalog's management pages (its menu says so)."""
        self.tokens = tokens
        self.sessions = sessions
        self.limit = limit
        self.manages = manages

    def required(self, handler: Handler) -> Handler:
        """``handler`` for signed-in users; others go to the login page. POSTs must carry
        the session's CSRF token (checked by the handler through :meth:`check_csrf`)."""

        async def endpoint(request: Request) -> Response:
            session = self.sessions.open(request.cookies.get(SESSION_COOKIE))
            if session is None:
                return RedirectResponse(f"{PREFIX}/login", status_code=303)
            request.scope["console_session"] = session
            request.scope["console_manages"] = self.manages
            return await handler(request)

        return endpoint

    async def login_form(self, request: Request, error: str | None = None) -> Response:
        csrf = request.cookies.get(LOGIN_CSRF_COOKIE) or new_login_csrf()
        response = page(
            request, "login.html", status=401 if error else 200, login_csrf=csrf, error=error
        )
        _cookie(response, request, LOGIN_CSRF_COOKIE, csrf, 3600)
        return response

    async def login(self, request: Request) -> Response:
        fields = await form(request)
        address = client_address(request.client)
        try:
            self.limit.check(address)
        except TooManyRequestsError as exc:
            response = await self.login_form(request, exc.message)
            response.status_code = exc.status
            response.headers["retry-after"] = str(exc.retry_after)
            return response
        if not same_token(fields.get("csrf"), request.cookies.get(LOGIN_CSRF_COOKIE)):
            return await self._refused(request, "The form expired; please sign in again.")
        hashed = self.tokens.match(fields.get("token", ""))
        if hashed is None:
            self.limit.failed(address, "console login")
            return await self.login_form(request, "That admin token is not valid.")
        response = RedirectResponse(f"{PREFIX}/", status_code=303)
        _cookie(
            response, request, SESSION_COOKIE, self.sessions.start(hashed), self.sessions.lifetime
        )
        response.delete_cookie(LOGIN_CSRF_COOKIE, path=PREFIX)
        return response

    async def logout(self, request: Request) -> Response:
        fields = await form(request)
        session = request.scope["console_session"]
        if not same_token(fields.get("csrf"), session.csrf):
            return page(request, "refused.html", status=403)
        self.sessions.end(session)
        response = RedirectResponse(f"{PREFIX}/login", status_code=303)
        response.delete_cookie(SESSION_COOKIE, path=PREFIX)
        return response

    async def _refused(self, request: Request, message: str) -> Response:
        response = await self.login_form(request, message)
        response.status_code = 403
        return response
