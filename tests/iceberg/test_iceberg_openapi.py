"""The Iceberg catalog's OpenAPI document, served at ``<iceberg.path>/openapi.json`` with that
base path as its server: generated from the catalog's route table and the model's structs,
every route it serves and the write operations it refuses (the mount refuses a route
without its entry, or the reverse), the bearer scheme; the whole document stays valid
OpenAPI, and the sharing document names none of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from unittest.mock import ANY

import httpx
import msgspec
import pytest
from openapi_spec_validator import validate
from starlette.applications import Starlette
from starlette.routing import BaseRoute, Route

from deltaport.config.loading import parse_config
from deltaport.iceberg.model.catalog import (
    CatalogConfig,
    GetNamespaceResponse,
    IcebergErrorResponse,
    ListNamespacesResponse,
    ListTablesResponse,
    LoadCredentialsResponse,
    LoadTableResult,
    ReportMetricsRequest,
)
from deltaport.iceberg.model.metadata import TableMetadata
from deltaport.iceberg.rest.operations import iceberg_document
from deltaport.listeners.iceberg_mount import mount_iceberg
from deltaport.server import create_app
from deltaport.web.operation_routes import check_documented, route_table
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


_NS = "/v1/shares/{share}/namespaces/{schema}"
PUBLISHED = {
    ("GET", "/openapi.json", "icebergGetOpenApi"),
    ("GET", "/v1/config", "icebergGetConfig"),
    ("GET", "/v1/shares/{share}/namespaces", "icebergListNamespaces"),
    ("POST", "/v1/shares/{share}/namespaces", "icebergCreateNamespace"),
    ("DELETE", _NS, "icebergDropNamespace"),
    ("GET", _NS, "icebergGetNamespace"),
    ("HEAD", _NS, "icebergNamespaceExists"),
    ("POST", _NS + "/properties", "icebergUpdateProperties"),
    ("POST", _NS + "/register", "icebergRegisterTable"),
    ("GET", _NS + "/tables", "icebergListTables"),
    ("POST", _NS + "/tables", "icebergCreateTable"),
    ("DELETE", _NS + "/tables/{table}", "icebergDropTable"),
    ("GET", _NS + "/tables/{table}", "icebergLoadTable"),
    ("HEAD", _NS + "/tables/{table}", "icebergTableExists"),
    ("POST", _NS + "/tables/{table}", "icebergUpdateTable"),
    ("GET", _NS + "/tables/{table}/credentials", "icebergLoadCredentials"),
    ("POST", _NS + "/tables/{table}/metrics", "icebergReportMetrics"),
    ("POST", "/v1/shares/{share}/tables/rename", "icebergRenameTable"),
    ("POST", "/v1/shares/{share}/transactions/commit", "icebergCommitTransaction"),
}
"""What the document has published (before it was generated): clients and fuzzers name
these operations, so none may go or be renamed."""


def test_the_published_operations_stay() -> None:
    document = iceberg_document("/iceberg")
    operations = {
        (method.upper(), path, operation["operationId"])
        for path, item in document["paths"].items()
        for method, operation in item.items()
    }
    assert operations == PUBLISHED


def _mounted(tmp_path: Path) -> tuple[Starlette, list[BaseRoute]]:
    """An app with the catalog mounted at a base path of the configuration's, and the
    catalog's routes in it."""
    config = parse_config(
        {"version": 1, "shares": [], "iceberg": {"path": "/lake/", "metadataDirectory": "m"}}, {}
    )
    app = create_app(config)
    before = len(app.routes)
    mount_iceberg(app, config, None)
    return app, list(app.routes[before:])


def test_the_document_lists_exactly_the_routes_served(tmp_path: Path) -> None:
    """Each route of the catalog at its base path is an operation of the document, and the
    reverse: the reads (HEADs too, routes of their own), the document, and the writes of the
    specification, each refused (406) to anyone; unknown paths are answered by a route that
    is not a path of its own."""
    app, routes = _mounted(tmp_path)
    document = app.state.iceberg_openapi
    assert document == iceberg_document("/lake")  # generated from the declared operations
    operations = _operations(document, "/lake")
    assert route_table(routes) == {(m.lower(), p) for m, p in operations}
    assert ("HEAD", "/lake/v1/shares/{share}/namespaces/{schema}/tables/{table}") in operations
    assert operations[("GET", "/lake/openapi.json")]["security"] == []
    refused = {key for key, op in operations.items() if op["operationId"] != "icebergGetOpenApi"}
    refused &= {key for key, op in operations.items() if "security" in op}
    assert len(refused) == 9
    assert all(set(operations[key]["responses"]) == {"406"} for key in refused)


def test_a_route_without_its_document_entry_or_an_entry_without_its_route_is_refused(
    tmp_path: Path,
) -> None:
    """The mount checks the catalog's routes against its document: a route added without
    its operation, or an operation whose route is gone, stops it."""
    app, routes = _mounted(tmp_path)
    documents = {"/lake": app.state.iceberg_openapi}
    check_documented(routes, documents)

    async def endpoint(request: Any) -> Any:
        raise AssertionError

    extra = Route("/lake/v1/shares/{share}/views", endpoint, methods=["GET"])
    with pytest.raises(ValueError, match=r"without their document entry: .*views"):
        check_documented([*routes, extra], documents)
    gone = [r for r in routes if not (isinstance(r, Route) and r.path.endswith("/credentials"))]
    with pytest.raises(ValueError, match=r"without their route: .*credentials"):
        check_documented(gone, documents)
    head = [r for r in routes if not (isinstance(r, Route) and r.methods == {"HEAD"})]
    with pytest.raises(ValueError, match=r"without their route: .*'head'"):
        check_documented(head, documents)
    refusals = [r for r in routes if not (isinstance(r, Route) and r.methods == {"DELETE"})]
    with pytest.raises(ValueError, match=r"without their route: .*'delete'"):
        check_documented(refusals, documents)


@pytest.mark.parametrize(
    ("name", "struct"),
    [
        ("CatalogConfig", CatalogConfig),
        ("ListNamespacesResponse", ListNamespacesResponse),
        ("GetNamespaceResponse", GetNamespaceResponse),
        ("ListTablesResponse", ListTablesResponse),
        ("LoadTableResult", LoadTableResult),
        ("LoadCredentialsResponse", LoadCredentialsResponse),
        ("IcebergErrorResponse", IcebergErrorResponse),
        ("ReportMetricsRequest", ReportMetricsRequest),
        ("TableMetadata", TableMetadata),
    ],
)
def test_the_document_names_the_structs_the_catalog_encodes(name: str, struct: type) -> None:
    """Each body's schema is its struct's, as msgspec gives it (kebab-case names, what is
    always written required)."""
    schemas = iceberg_document("/iceberg")["components"]["schemas"]
    _, components = msgspec.json.schema_components([struct])
    expected = components[struct.__name__]
    assert schemas[name]["properties"].keys() == expected["properties"].keys()
    assert schemas[name].get("required", []) == expected.get("required", [])


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


def test_requests_over_the_listeners_limits_are_refused_in_the_specification_shape(
    iceberg_server: RunningServer, catalog_uri: str
) -> None:
    """The body, path and header limits answer before any route: under the catalog's path
    in the specification's error shape (as its document says), elsewhere in the sharing
    API's own."""
    auth = {"Authorization": f"Bearer {TOKEN}"}
    long_name = "t" * 800
    table = f"{catalog_uri}/v1/shares/Sales/namespaces/d/tables"
    refused = [
        (httpx.get(f"{table}/{long_name}", headers=auth), 414),
        (httpx.get(f"{table}/basic", headers={**auth, "X-Padding": "p" * 17_000}), 431),
        (
            httpx.post(
                f"{table}/basic/metrics",
                content=b"{" + b" " * (1024 * 1024 + 1) + b"}",
                headers={**auth, "Content-Type": "application/json"},
            ),
            413,
        ),
    ]
    for answer, status in refused:
        assert answer.status_code == status, answer.text
        error = msgspec.json.decode(answer.content, type=IcebergErrorResponse).error
        assert (error.type, error.code) == ("BadRequestException", status)
        assert error.message
    sharing = httpx.get(f"{iceberg_server.url}/shares/{long_name}", headers=auth)
    assert sharing.status_code == 414
    assert sharing.json()["errorCode"] == "REQUEST_PATH_TOO_LONG"
    document = httpx.get(catalog_uri + "/openapi.json").json()
    table_path = "/v1/shares/{share}/namespaces/{schema}/tables/{table}"
    assert {"414", "431"} <= set(document["paths"][table_path]["get"]["responses"])
    assert "413" in document["paths"][table_path + "/metrics"]["post"]["responses"]
