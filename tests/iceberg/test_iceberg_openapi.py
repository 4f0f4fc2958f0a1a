"""The Iceberg catalog's OpenAPI document, served at ``<iceberg.path>/openapi.json`` with that
base path as its server: every route it serves, the write operations it refuses, its
schemas, and the bearer scheme; the whole document stays valid OpenAPI, and the sharing
document names none of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from unittest.mock import ANY

import httpx
import pytest
from openapi_spec_validator import validate
from starlette.routing import Route

from deltaport.config.model import parse_config
from deltaport.listeners.iceberg_mount import mount_iceberg
from deltaport.server import create_app
from sharing_server import TOKEN, RunningServer

NAMES = {"share": "Sales", "schema": "d", "table": "basic"}


def _document(server: RunningServer) -> dict[str, Any]:
    answer = httpx.get(server.base + "/iceberg/openapi.json", timeout=30)
    assert answer.status_code == 200
    document: dict[str, Any] = answer.json()
    return document


def _operations(document: dict[str, Any], base: str) -> dict[tuple[str, str], dict[str, Any]]:
    """The catalog's operations, by method and full path (its server's ``base`` first)."""
    assert document["servers"] == [{"url": base}]
    return {
        (method.upper(), base + path): operation
        for path, item in document["paths"].items()
        for method, operation in item.items()
    }


def test_the_served_document_lists_the_catalog_and_stays_valid(
    iceberg_server: RunningServer,
) -> None:
    document = _document(iceberg_server)
    validate(document)  # OpenAPI 3.1, every $ref resolved
    operations = _operations(document, "/iceberg")
    assert ("GET", "/iceberg/v1/shares/{share}/namespaces/{schema}/tables/{table}") in operations
    for (method, path), operation in operations.items():
        assert "servers" not in document["paths"][path.removeprefix("/iceberg")], path
        assert operation["operationId"].startswith("iceberg"), path
        if "security" not in operation:  # the recipient's bearer token, like the sharing API
            assert document["security"] == [{"bearer": []}]
            assert {"401", "403", "429"} <= set(operation["responses"]), (method, path)
    schemas = document["components"]["schemas"]
    for name in (
        "LoadTableResult",
        "ListNamespacesResponse",
        "GetNamespaceResponse",
        "ListTablesResponse",
        "CatalogConfig",
        "LoadCredentialsResponse",
        "IcebergErrorResponse",
    ):
        assert name in schemas, name
    assert document["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    sharing = httpx.get(iceberg_server.url + "/openapi.json", timeout=30).json()
    assert not [p for p in sharing["paths"] if "iceberg" in p or "/v1/" in p]
    assert "IcebergErrorResponse" not in sharing["components"]["schemas"]


def test_the_document_lists_exactly_the_routes_served(tmp_path: Path) -> None:
    """The routes of the catalog, at a base path of the configuration's, each documented
    (the refusals and unknown paths are answered by a route that is not a path of its own)."""
    config = parse_config(
        {"version": 1, "shares": [], "iceberg": {"path": "/lake/", "metadataDirectory": "m"}}, {}
    )
    app = create_app(config)
    mount_iceberg(app, config, None)
    served: set[tuple[str, str]] = set()
    for route in app.routes:
        if isinstance(route, Route) and route.path.startswith("/lake/"):
            # Starlette adds HEAD to every GET route: the documented HEADs are tried below
            served |= {(m, route.path) for m in route.methods or () if m != "HEAD"}
    operations = _operations(app.state.iceberg_openapi, "/lake")
    read = {key for key, op in operations.items() if "security" not in op}
    refused = {key for key, op in operations.items() if "security" in op}
    document = ("GET", "/lake/openapi.json")
    assert {(m, p) for m, p in read if m != "HEAD"} | {document} == served
    assert operations[document]["security"] == []
    refused.discard(document)
    assert all(set(op["responses"]) == {"406"} for key, op in operations.items() if key in refused)


def test_each_documented_operation_is_answered_as_documented(
    iceberg_server: RunningServer,
) -> None:
    """Every operation, with names that exist and the token, answers a documented success
    (the read routes) or the refusal of a read-only catalog (406, the error shape)."""
    document = _document(iceberg_server)
    headers = {"Authorization": f"Bearer {TOKEN}"}
    for (method, path), operation in _operations(document, "/iceberg").items():
        url = iceberg_server.base + path.format(**NAMES)
        params = {"warehouse": "Sales"} if path.endswith("/config") else None
        answer = httpx.request(method, url, headers=headers, params=params, json={}, timeout=60)
        assert str(answer.status_code) in operation["responses"], (method, path, answer.text)
        if path.endswith("/openapi.json"):
            assert answer.json()["servers"] == [{"url": "/iceberg"}]
        elif "security" in operation:
            assert answer.status_code == 406
            assert answer.json()["error"]["type"] == "UnsupportedOperationException"
        else:
            assert answer.status_code in (200, 204), (method, path, answer.text)


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/v1/shares/Sales/views", 404),
        ("HEAD", "/v1/shares/Sales/views", 404),
        ("POST", "/v1/shares/Sales/views", 406),
        ("OPTIONS", "/v1/config", 406),
        # a newline in the path (fuzzing found it answered 404 in Delta Sharing's shape)
        ("POST", "/v1/shares/%0Ax/transactions/commit", 406),
        ("GET", "/v1/shares/%0A/views", 404),
        ("PUT", "/v1/%0A", 406),
    ],
)
def test_what_the_catalog_does_not_serve_is_refused_in_its_error_shape(
    catalog_uri: str, method: str, path: str, status: int
) -> None:
    answer = httpx.request(method, catalog_uri + path, json={})
    assert answer.status_code == status, answer.text
    if method != "HEAD":
        kind = "NoSuchResourceException" if status == 404 else "UnsupportedOperationException"
        assert answer.json()["error"] == {"message": ANY, "type": kind, "code": status}
