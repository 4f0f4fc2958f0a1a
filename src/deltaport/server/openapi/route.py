"""Routes from operations: each route's path and method are its operation's, so a route
cannot change without its document; and the route that serves a document: open to
anyone, encoded once."""

from __future__ import annotations

from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from deltaport.protocol.openapi import Operation

JSON = "application/json; charset=utf-8"


def operation_route(base: str, operation: Operation, endpoint: Any) -> Route:
    """The route serving ``operation`` under ``base`` with ``endpoint``."""
    return Route(base + operation.path, endpoint, methods=[operation.method.upper()])


def document_route(path: str, document: dict[str, Any]) -> Route:
    """``GET path``: ``document`` as JSON, encoded when first asked (after the listener has
    put together every part of it)."""
    encoded: list[bytes] = []

    async def serve(request: Request) -> Response:
        if not encoded:
            encoded.append(msgspec.json.encode(document))
        return Response(encoded[0], media_type=JSON)

    return Route(path, serve, methods=["GET"])
