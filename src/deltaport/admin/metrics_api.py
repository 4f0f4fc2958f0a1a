"""``GET /metrics`` on the admin listener: the process's Prometheus metrics, for an admin
token (a scraper sends one as a bearer token), like the rest of the admin API."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

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


def metrics_paths() -> dict[str, Any]:
    """The OpenAPI paths of ``/metrics`` and of the health probes on the admin listener."""
    text = {"text/plain": {"schema": {"type": "string"}}}
    probe_ok = {"200": {"description": "ok", "content": text}}
    return {
        METRICS_PATH: {
            "get": {
                "operationId": "metrics",
                "summary": "The process's Prometheus metrics (text exposition format)",
                "responses": {
                    "200": {"description": "The metrics.", "content": text},
                    "401": {"description": "The admin token is missing or wrong."},
                },
            }
        },
        "/livez": {
            "get": {
                "operationId": "livez",
                "summary": "Liveness: 200 while the process runs",
                "security": [],
                "responses": probe_ok,
            }
        },
        "/readyz": {
            "get": {
                "operationId": "readyz",
                "summary": "Readiness: 503 while draining or while the catalog cannot be read",
                "security": [],
                "responses": {**probe_ok, "503": {"description": "Not ready", "content": text}},
            }
        },
    }
