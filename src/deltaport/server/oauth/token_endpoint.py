"""``POST {endpoint}/oauth/token``: the client-credentials grant of RFC 6749 (section 4.4)
for OAuth recipients.

The request is ``application/x-www-form-urlencoded`` with ``grant_type=client_credentials``
(and an optional ``scope``, accepted and not used); the client authenticates with HTTP
Basic (section 2.3.1, what both the official client and deltaport's send) or with
``client_id`` and ``client_secret`` in the body, not both. A parameter given twice is refused
(section 3.2). The answer is section 5.1's ``{"access_token", "token_type": "Bearer",
"expires_in"}`` with ``Cache-Control: no-store``; errors are section 5.2's ``{"error",
"error_description"}``, with the sharing API's ``errorCode`` and ``message`` beside them so
that either kind of client can read them. A client outside its recipient's IP access list
gets 403 ``PERMISSION_DENIED``. A failed client authentication (401) counts in the sharing
listener's failed-authentication limit, as a wrong bearer token does: past it the address
is answered 429 ``TOO_MANY_REQUESTS`` with ``Retry-After`` before its credentials are read.
"""

from __future__ import annotations

import base64
import binascii
from urllib.parse import parse_qsl, unquote_plus

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from deltaport.catalog.live.live_catalog import LiveCatalog
from deltaport.protocol.errors import SharingError, TooManyRequestsError
from deltaport.protocol.profile import TokenAnswer, TokenError, TokenRequest
from deltaport.web.client_address import client_host
from deltaport.web.failed_auth import FailedAuthLimit, client_address

FORM = "application/x-www-form-urlencoded"
_NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
_GRANT_TYPE = "grant_type must be client_credentials"


class _OAuthError(Exception):
    def __init__(self, status: int, error: str, description: str, error_code: str) -> None:
        super().__init__(description)
        self.status = status
        self.error = error
        self.description = description
        self.error_code = error_code


def _invalid_request(description: str) -> _OAuthError:
    return _OAuthError(400, "invalid_request", description, "INVALID_PARAMETER_VALUE")


def _invalid_client(description: str) -> _OAuthError:
    return _OAuthError(401, "invalid_client", description, "UNAUTHENTICATED")


class TokenEndpoint:
    def __init__(self, live: LiveCatalog, lifetime_seconds: int, limit: FailedAuthLimit) -> None:
        self._live = live
        self._lifetime_seconds = lifetime_seconds
        self._limit = limit

    async def answer(self, request: Request) -> Response:
        address = client_address(request.client)
        try:
            self._limit.check(address)
        except TooManyRequestsError as exc:
            refused = _OAuthError(429, "temporarily_unavailable", exc.message, exc.error_code)
            response = _error(refused)
            response.headers["retry-after"] = str(exc.retry_after)
            return response
        try:
            return self._issued(request, await request.body())
        except _OAuthError as exc:
            if exc.status == 401:
                self._limit.failed(address, "OAuth client authentication")
            return _error(exc, basic=exc.status == 401)

    def _issued(self, request: Request, body: bytes) -> Response:
        """The access token answer; :class:`_OAuthError` for every refusal."""
        try:
            form = _form(request, body)
            if form.grant_type != "client_credentials":
                raise _OAuthError(
                    400,
                    "unsupported_grant_type",
                    _GRANT_TYPE,
                    "INVALID_PARAMETER_VALUE",
                )
            client_id, secret = _client(request, form)
            try:
                recipient, token, lifetime = self._live.client_credentials(
                    client_id, secret, self._lifetime_seconds
                )
            except SharingError as exc:
                if exc.status != 401:
                    raise
                raise _OAuthError(401, "invalid_client", exc.message, exc.error_code) from None
            request.state.recipient = recipient.name  # for its audit record
            recipient.ip_access.admit(client_host(request.scope))
        except SharingError as exc:
            error = "access_denied" if exc.status == 403 else "temporarily_unavailable"
            raise _OAuthError(exc.status, error, exc.message, exc.error_code) from None
        answer = TokenAnswer(access_token=token, token_type="Bearer", expires_in=lifetime)
        return Response(
            msgspec.json.encode(answer), media_type="application/json", headers=_NO_STORE
        )


def _form(request: Request, body: bytes) -> TokenRequest:
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type != FORM:
        raise _invalid_request(f"the body must be {FORM}")
    try:
        pairs = parse_qsl(body.decode("ascii"), keep_blank_values=True, strict_parsing=bool(body))
    except (UnicodeDecodeError, ValueError):
        raise _invalid_request("the body is not a valid form") from None
    form: dict[str, str] = {}
    for name, value in pairs:
        if name in form:
            raise _invalid_request(f"{name[:80]} is given more than once")
        form[name] = value
    try:
        return msgspec.convert(form, TokenRequest)
    except msgspec.ValidationError:  # no grant_type
        raise _invalid_request(_GRANT_TYPE) from None


def _client(request: Request, form: TokenRequest) -> tuple[str, str]:
    """The client id and secret, from HTTP Basic or the body (one of the two)."""
    header = request.headers.get("authorization")
    in_body = form.client_id is not None or form.client_secret is not None
    if header is not None:
        if in_body:
            raise _invalid_request("the client authenticates with one method, not two")
        scheme, _, encoded = header.partition(" ")
        try:
            decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            decoded = ""
        client_id, sep, secret = decoded.partition(":")
        if scheme.lower() != "basic" or not sep:
            raise _OAuthError(
                401, "invalid_client", "malformed Basic credentials", "UNAUTHENTICATED"
            )
        return unquote_plus(client_id), unquote_plus(secret)
    if not in_body:
        raise _invalid_client("no client credentials")
    return form.client_id or "", form.client_secret or ""


def _error(error: _OAuthError, *, basic: bool = False) -> Response:
    body = TokenError(error.error, error.description, error.error_code, error.description)
    headers = dict(_NO_STORE)
    if basic:
        headers["WWW-Authenticate"] = 'Basic realm="deltaport"'
    return Response(
        msgspec.json.encode(body),
        status_code=error.status,
        media_type="application/json",
        headers=headers,
    )
