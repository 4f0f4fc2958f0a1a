"""The admin JSON API under ``/api``: the admin token as a bearer token, errors as
``{"errorCode", "message"}`` with the HTTP status, and its own OpenAPI document."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import msgspec
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from deltaport.admin.diff_service import DiffRequest, DiffService
from deltaport.admin.errors import as_sharing_error
from deltaport.admin.openapi.document import admin_openapi
from deltaport.admin.tokens import AdminTokens
from deltaport.protocol.errors import (
    InternalError,
    SharingError,
    TooManyRequestsError,
    UnauthenticatedError,
)
from deltaport.protocol.params import bool_param, int_param
from deltaport.web.failed_auth import FailedAuthLimit, client_address

log = logging.getLogger(__name__)

JSON = "application/json; charset=utf-8"

Handler = Callable[[Request], Awaitable[Response]]


def diff_request(params: QueryParams) -> DiffRequest:
    """A :class:`DiffRequest` from query parameters (or a console form)."""

    def names(key: str) -> tuple[str, ...]:
        return tuple(n.strip() for n in (params.get(key) or "").split(",") if n.strip())

    return DiffRequest(
        left=params.get("left") or "",
        right=params.get("right") or "",
        base_version=int_param(params.get("base_version"), "base_version"),
        limit=int_param(params.get("limit"), "limit"),
        page_token=params.get("page_token") or None,
        rows=bool_param(params.get("rows"), "rows"),
        key=names("key"),
        columns=names("columns"),
        where=params.get("where") or None,
        left_version=int_param(params.get("left_version"), "left_version"),
        right_version=int_param(params.get("right_version"), "right_version"),
    )


def json_response(value: object, status: int = 200) -> Response:
    return Response(msgspec.json.encode(value), status_code=status, media_type=JSON)


def error_json(error: SharingError) -> Response:
    response = json_response(error.body(), error.status)
    if isinstance(error, TooManyRequestsError):
        response.headers["retry-after"] = str(error.retry_after)
    return response


class AdminApi:
    def __init__(self, tokens: AdminTokens, diffs: DiffService, limit: FailedAuthLimit) -> None:
        self.tokens = tokens
        self.limit = limit
        self.diffs = diffs
        self._openapi = msgspec.json.encode(admin_openapi())

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/api/diff", self.guard(self.diff), methods=["GET"]),
            Route("/api/openapi.json", self.openapi, methods=["GET"]),
        ]

    def guard(
        self, handler: Handler, answer: Callable[[SharingError], Response] = error_json
    ) -> Handler:
        """``handler`` behind the admin token; errors answered by ``answer``."""

        async def endpoint(request: Request) -> Response:
            try:
                address = client_address(request.client)
                self.limit.check(address)
                if self.tokens.bearer(request.headers.get("authorization")) is None:
                    self.limit.failed(address, "admin token")
                    raise UnauthenticatedError("a valid admin token is required")
                return await handler(request)
            except Exception as exc:
                error = as_sharing_error(exc)
                if error is None:
                    log.error("unexpected error on %s", request.url.path, exc_info=exc)
                    error = InternalError()
                return answer(error)

        return endpoint

    async def diff(self, request: Request) -> Response:
        query = diff_request(request.query_params)
        run = self.diffs.rows if query.rows else self.diffs.commits
        return json_response(await self.diffs.within_time(run, query))

    async def openapi(self, request: Request) -> Response:
        return Response(self._openapi, media_type=JSON)
