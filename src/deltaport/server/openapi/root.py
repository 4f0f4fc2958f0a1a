"""The OpenAPI 3.1 document of the sharing listener's root, served at ``/openapi.json``: the
health probes and, on a catalog server, the activation routes (at Unity Catalog's public
paths). Its server is ``/``, so every path in it is where the route is served."""

from __future__ import annotations

from typing import Any

from deltaport.server.openapi.catalog_routes import activation_paths

ROOT_DOCUMENT_PATH = "/openapi.json"

_TEXT = {"text/plain": {"schema": {"type": "string"}}}


def _probe(op_id: str, summary: str, more: dict[str, Any]) -> dict[str, Any]:
    responses = {"200": {"description": "ok", "content": _TEXT}, **more}
    return {"get": {"operationId": op_id, "summary": summary, "responses": responses}}


def root_document(endpoint: str, *, catalog: bool = False) -> dict[str, Any]:
    """The document of the routes at the listener's root (``catalog``: with the activation
    routes of a server on a catalog database)."""
    paths: dict[str, Any] = {
        "/livez": _probe("livez", "Liveness: 200 while the process runs", {}),
        "/readyz": _probe(
            "readyz",
            "Readiness: 200, or 503 while draining or while the catalog cannot be read",
            {"503": {"description": "Not ready (the reason in the body)", "content": _TEXT}},
        ),
        ROOT_DOCUMENT_PATH: {
            "get": {
                "operationId": "getRootOpenApi",
                "summary": "This document",
                "responses": {"200": {"description": "OK", "content": {"application/json": {}}}},
            }
        },
    }
    if catalog:
        paths.update(activation_paths())
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "deltaport sharing listener: routes at the root",
            "version": "1",
            "description": f"No route here takes a token. The sharing API is described at "
            f"{endpoint}/openapi.json, the Iceberg REST catalog (when enabled) at "
            "<iceberg.path>/openapi.json.",
        },
        "servers": [{"url": "/"}],
        "security": [],
        "paths": paths,
    }
