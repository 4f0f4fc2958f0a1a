"""ASGI middleware counting every answered request into :mod:`deltaport.observe.metrics`,
labelled by its route template, never by its raw path (paths carry share, table and file
names, an unbounded set).

The templates are read from the app's routes (``scope["app"]``, set by Starlette before
any middleware) on the first request, so routes that other middleware answers first (the
hot routes, local files) are labelled by the route that would have answered them too.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence

from starlette.routing import BaseRoute, Mount, Route, compile_path
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from deltaport.observe.metrics import OTHER, count_request

Templates = list[tuple[re.Pattern[str], str]]


class RequestMetrics:
    def __init__(self, app: ASGIApp, listener: str) -> None:
        self._app = app
        self._listener = listener
        self._templates: Templates | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self._app(scope, receive, send)
        started = time.perf_counter()
        status = 500  # unless an answer starts

        async def counted(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self._app(scope, receive, counted)
        finally:
            seconds = time.perf_counter() - started
            count_request(self._listener, self._route(scope), scope["method"], status, seconds)

    def _route(self, scope: Scope) -> str:
        if self._templates is None:
            app = scope.get("app")
            self._templates = route_templates(getattr(app, "routes", []))
        path: str = scope["path"]
        for pattern, template in self._templates:
            if pattern.match(path):
                return template
        return OTHER


def route_templates(routes: Sequence[BaseRoute], prefix: str = "") -> Templates:
    """(pattern, template) of each route, in routing order; a mount's routes under its
    path, a mounted app as ``{mount}/{path}``."""
    templates: Templates = []
    for route in routes:
        if isinstance(route, Mount) and route.routes:
            templates += route_templates(route.routes, prefix + route.path)
        elif isinstance(route, Mount | Route):
            pattern, template, _ = compile_path(prefix + _path(route))
            templates.append((pattern, template))
    return templates


def _path(route: Mount | Route) -> str:
    return route.path + "/{path:path}" if isinstance(route, Mount) else route.path
