"""``GET /metrics`` on the admin listener: the process's Prometheus metrics, for an admin
token (a scraper sends one as a bearer token), like the rest of the admin API."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from deltaport.observe.metrics import CONTENT_TYPE, exposition

Handler = Callable[[Request], Awaitable[Response]]
METRICS_PATH = "/metrics"


def metrics_routes(guard: Callable[[Handler], Handler]) -> list[Route]:
    async def metrics(request: Request) -> Response:
        return Response(exposition(), media_type=CONTENT_TYPE)

    return [Route(METRICS_PATH, guard(metrics), methods=["GET"])]
