"""Routes from operations: each route's path and method are its operation's, so a route
cannot change without its document; the check that a listener's route table and its
documents name the same operations; and the route that serves a document: open to anyone,
encoded once."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, Route

from deltaport.protocol.openapi import Operation

JSON = "application/json; charset=utf-8"


def operation_route(base: str, operation: Operation, endpoint: Any) -> Route:
    """The route serving ``operation`` under ``base`` with ``endpoint``."""
    return Route(base + operation.path, endpoint, methods=[operation.method.upper()])


def check_documented(routes: Iterable[BaseRoute], documents: Mapping[str, dict[str, Any]]) -> None:
    """ValueError unless the operations of ``routes`` are those of ``documents`` (by their
    server's base path, ``/`` for the listener's root): no route without its entry, no
    entry without its route."""
    served = route_table(routes)
    documented = {
        (method, base.rstrip("/") + path)
        for base, document in documents.items()
        for path, item in document["paths"].items()
        for method in item
    }
    if served != documented:
        raise ValueError(
            f"routes without their document entry: {sorted(served - documented)}; "
            f"document entries without their route: {sorted(documented - served)}"
        )


def route_table(routes: Iterable[BaseRoute], prefix: str = "") -> set[tuple[str, str]]:
    """``(method, path)`` of each route as a document names it: without path convertors,
    and without the HEAD Starlette adds to a GET."""
    table: set[tuple[str, str]] = set()
    for route in routes:
        if isinstance(route, Mount):
            table |= route_table(route.routes, prefix + route.path)
        elif isinstance(route, Route):
            path = _CONVERTOR.sub(r"{\1}", prefix + route.path)
            methods = set(route.methods or ())
            if methods != {"HEAD"}:
                methods.discard("HEAD")
            table |= {(method.lower(), path) for method in methods}
    return table


_CONVERTOR = re.compile(r"\{(\w+):\w+\}")


def document_route(path: str, document: dict[str, Any]) -> Route:
    """``GET path``: ``document`` as JSON, encoded when first asked (after the listener has
    put together every part of it)."""
    encoded: list[bytes] = []

    async def serve(request: Request) -> Response:
        if not encoded:
            encoded.append(msgspec.json.encode(document))
        return Response(encoded[0], media_type=JSON)

    return Route(path, serve, methods=["GET"])
