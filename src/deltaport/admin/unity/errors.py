"""Errors in Unity Catalog's shape: ``{"error_code", "message"}`` with the HTTP status. The
codes are deltaport's (see docs/errors.md), which are Unity Catalog's where one exists
(``INVALID_PARAMETER_VALUE``, ``RESOURCE_DOES_NOT_EXIST``, ``RESOURCE_ALREADY_EXISTS``, ...),
so the Databricks SDK raises its matching exception types."""

from __future__ import annotations

import msgspec
from starlette.requests import Request
from starlette.responses import Response

from deltaport.protocol.errors import ResourceNotFoundError, SharingError, TooManyRequestsError
from deltaport.web.error_shapes import ErrorShapes

PREFIX = "/api/2.1/unity-catalog/"
OPENSHARING_PREFIX = "/api/2.1/opensharing/provider/"
"""OpenSharing's provider API: the same resources as Unity Catalog's, under this prefix."""
OPENSHARING_ACTIVATION = "/api/2.1/opensharing/activation"
PREFIXES = (PREFIX, OPENSHARING_PREFIX, OPENSHARING_ACTIVATION + "/")
JSON = "application/json; charset=utf-8"


def in_unity_shape(path: str) -> bool:
    """Whether errors on ``path`` answer in this shape (the provider API's prefixes)."""
    return path.startswith(PREFIXES)


def unity_json(value: object, status: int = 200) -> Response:
    return Response(msgspec.json.encode(value), status_code=status, media_type=JSON)


class UnityErrorBody(msgspec.Struct):
    """The JSON body of every error response in this shape."""

    error_code: str
    message: str


def unity_body(error: SharingError) -> UnityErrorBody:
    body = error.body()
    return UnityErrorBody(body.errorCode, body.message)


def unity_error_shapes() -> ErrorShapes:
    """The bodies of errors answered before routing (such as the body limit's): this shape
    under :data:`PREFIXES`, deltaport's own elsewhere."""
    shapes = ErrorShapes()
    for prefix in PREFIXES:
        shapes.add(prefix, unity_body)
    return shapes


def unity_error(error: SharingError) -> Response:
    response = unity_json(unity_body(error), error.status)
    if isinstance(error, TooManyRequestsError):
        response.headers["retry-after"] = str(error.retry_after)
    return response


async def no_databricks_config(request: Request) -> Response:
    """``GET /.well-known/databricks-config``: the Databricks SDK asks it first (without a
    token) for a workspace's metadata; deltaport has none, and a 404 tells the SDK to go on
    with what it was given."""
    return unity_error(ResourceNotFoundError("deltaport publishes no Databricks host metadata"))
