"""The OpenAPI 3.1 document of the sharing listener's root, served at ``/openapi.json``: the
health probes and, on a catalog server, the activation routes (at Unity Catalog's public
paths). Its server is ``/``, so every path in it is where the route is served."""

from __future__ import annotations

from typing import Any

from deltaport.protocol.openapi import Answer, Api, Content, Operation, openapi_document
from deltaport.server.openapi.catalog_routes import ACTIVATION_OPERATIONS
from deltaport.server.openapi.parameters import JSON, SCHEMA_NAMES
from deltaport.web.health import LIVEZ, READYZ

ROOT_DOCUMENT_PATH = "/openapi.json"

GET_ROOT_OPENAPI = Operation(
    "get",
    ROOT_DOCUMENT_PATH,
    "getRootOpenApi",
    "This document",
    (Answer(200, "OK", Content(JSON)),),
)
ROOT_OPERATIONS = (LIVEZ, READYZ, GET_ROOT_OPENAPI)


def root_operations(*, catalog: bool = False) -> tuple[Operation, ...]:
    """The operations at the root (``catalog``: with the activation routes)."""
    return (*ROOT_OPERATIONS, *ACTIVATION_OPERATIONS) if catalog else ROOT_OPERATIONS


def root_document(endpoint: str, *, catalog: bool = False) -> dict[str, Any]:
    """The document of the routes at the listener's root (``catalog``: with the activation
    routes of a server on a catalog database)."""
    api = Api(
        title="deltaport sharing listener: routes at the root",
        description=f"No route here takes a token. The sharing API is described at "
        f"{endpoint}/openapi.json, the Iceberg REST catalog (when enabled) at "
        "<iceberg.path>/openapi.json.",
        schema_names=SCHEMA_NAMES,
    )
    return openapi_document(api, "/", root_operations(catalog=catalog))
