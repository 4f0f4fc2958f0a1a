"""The route that serves an OpenAPI document: open to anyone, encoded once."""

from __future__ import annotations

from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

JSON = "application/json; charset=utf-8"


def document_route(path: str, document: dict[str, Any]) -> Route:
    """``GET path``: ``document`` as JSON, encoded when first asked (after the listener has
    put together every part of it)."""
    encoded: list[bytes] = []

    async def serve(request: Request) -> Response:
        if not encoded:
            encoded.append(msgspec.json.encode(document))
        return Response(encoded[0], media_type=JSON)

    return Route(path, serve, methods=["GET"])
