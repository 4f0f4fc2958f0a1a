"""The two most frequent API requests, answered before Starlette's routing.

Streaming readers (Spark's among them) poll ``GET .../tables/{table}/version`` between
micro-batches, and every recipient session starts with ``GET .../shares``. Both answers
cost less than the router in front of them: matching the request against each route in
turn, then its exception layer and request wrapper. :class:`HotRoutesFirst` hands these
two straight to the same endpoint functions their routes call (so both paths give the
same answers and errors); every other request goes on to routing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

Endpoint = Callable[[Request], Awaitable[Response]]

_VERSION = "/version"


class HotRoutesFirst:
    """ASGI middleware answering ``GET {endpoint}/shares`` with ``list_shares`` and
    ``GET {endpoint}/shares/{share}/schemas/{schema}/tables/{table}/version`` with
    ``table_version``."""

    def __init__(
        self, app: ASGIApp, endpoint: str, list_shares: Endpoint, table_version: Endpoint
    ) -> None:
        self._app = app
        self._shares = endpoint.rstrip("/") + "/shares"
        self._list_shares = list_shares
        self._table_version = table_version

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET":
            path: str = scope["path"]
            if path == self._shares:
                return await self._answer(self._list_shares, {}, scope, receive, send)
            names = table_names(path, self._shares + "/")
            if names is not None:
                params = dict(zip(("share", "schema", "table"), names, strict=True))
                return await self._answer(self._table_version, params, scope, receive, send)
        return await self._app(scope, receive, send)

    @staticmethod
    async def _answer(
        endpoint: Endpoint, params: dict[str, str], scope: Scope, receive: Receive, send: Send
    ) -> None:
        scope = {**scope, "path_params": params}
        response = await endpoint(Request(scope, receive))
        await response(scope, receive, send)


def table_names(path: str, prefix: str) -> tuple[str, str, str] | None:
    """(share, schema, table) of a version path under ``prefix`` (``.../shares/``), else
    None; names match as the routes' ``{name}`` parameters do (one non-empty segment)."""
    if not path.startswith(prefix) or not path.endswith(_VERSION):
        return None
    parts = path[len(prefix) : -len(_VERSION)].split("/")
    if len(parts) != 5 or parts[1] != "schemas" or parts[3] != "tables" or not all(parts):
        return None
    return parts[0], parts[2], parts[4]
