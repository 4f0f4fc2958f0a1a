"""``/livez`` and ``/readyz``: unauthenticated probes for load balancers and Kubernetes,
served by both listeners (see :mod:`deltaport.observe.health`)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from deltaport.observe.health import Readiness
from deltaport.protocol.openapi import Answer, Content, Operation
from deltaport.web.operation_routes import operation_route

_TEXT = Content("text/plain", str)
LIVEZ = Operation(
    "get", "/livez", "livez", "Liveness: 200 while the process runs", (Answer(200, "ok", _TEXT),)
)
READYZ = Operation(
    "get",
    "/readyz",
    "readyz",
    "Readiness: 200, or 503 while draining or while the catalog cannot be read",
    (Answer(200, "ok", _TEXT), Answer(503, "Not ready (the reason in the body)", _TEXT)),
)


def health_routes(readiness: Readiness) -> list[Route]:
    async def livez(request: Request) -> Response:
        return PlainTextResponse("ok\n")

    async def readyz(request: Request) -> Response:
        reason = readiness.not_ready_because()
        if reason is not None:
            return PlainTextResponse(f"not ready: {reason}\n", status_code=503)
        return PlainTextResponse("ready\n")

    return [
        operation_route("", LIVEZ, livez),
        operation_route("", READYZ, readyz),
    ]
