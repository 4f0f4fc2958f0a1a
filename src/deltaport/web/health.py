"""``/livez`` and ``/readyz``: unauthenticated probes for load balancers and Kubernetes,
served by both listeners (see :mod:`deltaport.observe.health`)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from deltaport.observe.health import Readiness

LIVE_PATH = "/livez"
READY_PATH = "/readyz"


def health_routes(readiness: Readiness) -> list[Route]:
    async def livez(request: Request) -> Response:
        return PlainTextResponse("ok\n")

    async def readyz(request: Request) -> Response:
        reason = readiness.not_ready_because()
        if reason is not None:
            return PlainTextResponse(f"not ready: {reason}\n", status_code=503)
        return PlainTextResponse("ready\n")

    return [
        Route(LIVE_PATH, livez, methods=["GET", "HEAD"]),
        Route(READY_PATH, readyz, methods=["GET", "HEAD"]),
    ]
