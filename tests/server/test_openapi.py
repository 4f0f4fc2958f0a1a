"""The sharing listener's OpenAPI documents describe exactly the routes the app serves, each
route in the document of the base path it is served under."""

from __future__ import annotations

from typing import Any

import httpx
import msgspec
import pytest
from starlette.routing import Mount, Route

from deltaport.config.loading import parse_config
from deltaport.protocol.actions import (
    GetTableResponse,
    ListSharesResponse,
    QueryInfoRequest,
    QueryTableRequest,
    TableItem,
)
from deltaport.protocol.credentials import TemporaryCredentialsRequest
from deltaport.protocol.errors import ErrorBody
from deltaport.protocol.file_batch import FileBatchRequest
from deltaport.protocol.profile import TokenRequest
from deltaport.server import create_app
from deltaport.server.openapi.document import openapi_document
from deltaport.server.openapi.root import root_document
from deltaport.web.operation_routes import check_documented
from sharing_server import TOKEN, RunningServer


def served_operations(app: Any, endpoint: str) -> dict[str, set[tuple[str, str]]]:
    """The routes under ``endpoint`` (relative to it) and the others (from the root)."""
    out: dict[str, set[tuple[str, str]]] = {endpoint: set(), "/": set()}

    def visit(routes: list[Any], prefix: str) -> None:
        for route in routes:
            if isinstance(route, Mount):
                visit(route.routes, prefix + route.path)
            elif isinstance(route, Route):
                path = (prefix + route.path).replace("{file_path:path}", "{file_path}")
                base = endpoint if path.startswith(endpoint + "/") else "/"
                if base == endpoint:
                    path = path[len(endpoint) :]
                methods = set(route.methods or ())
                if methods != {"HEAD"}:
                    methods.discard("HEAD")  # Starlette adds HEAD to every GET route
                for method in methods:
                    out[base].add((method.lower(), path))

    visit(app.routes, "")
    return out


def documented_operations(document: dict[str, Any]) -> set[tuple[str, str]]:
    return {(method, path) for path, item in document["paths"].items() for method in item}


def test_document_matches_route_table(server_config: dict[str, Any]) -> None:
    config = parse_config(
        {**server_config, "endpoint": "/api/v2/sharing"}, {"DELTAPORT_TEST_TOKEN": "t"}
    )
    app = create_app(config)
    document, root = app.state.openapi, app.state.root_openapi
    served = served_operations(app, "/api/v2/sharing")
    assert served["/api/v2/sharing"] == documented_operations(document)
    assert (
        served["/"]
        == documented_operations(root)
        == {
            ("get", "/livez"),
            ("get", "/readyz"),
            ("get", "/openapi.json"),
        }
    )
    assert document["servers"] == [{"url": "/api/v2/sharing"}]
    assert root["servers"] == [{"url": "/"}]
    assert (
        "post",
        "/shares/{share}/schemas/{schema}/tables/{table}/query",
    ) in documented_operations(document)
    assert ("head", "/shares/{share}/schemas/{schema}/tables/{table}") in served["/api/v2/sharing"]
    for path, item in [*document["paths"].items(), *root["paths"].items()]:
        assert "servers" not in item, path  # schemathesis and most tools read only the top's
        names = {
            p["name"] for op in item.values() for p in op.get("parameters", []) if p["in"] == "path"
        }
        assert names == {seg[1:-1] for seg in path.split("/") if seg.startswith("{")}, path


def test_served_document(server: RunningServer) -> None:
    response = httpx.get(server.url + "/openapi.json")
    assert response.status_code == 200
    document = msgspec.json.decode(response.content)
    assert document["openapi"].startswith("3.")
    assert document["servers"] == [{"url": "/delta-sharing"}]
    assert "/shares" in document["paths"]
    root = httpx.get(server.base + "/openapi.json").json()
    assert root["servers"] == [{"url": "/"}]
    assert set(root["paths"]) == {"/livez", "/readyz", "/openapi.json"}


def test_path_parameters_say_how_long_they_may_be_and_what_is_answered_past_it(
    server_config: dict[str, Any],
) -> None:
    """A name in a path may have 767 characters (a table's full name), a query id 4,096;
    past that the listener answers 414 REQUEST_PATH_TOO_LONG, which every operation with a
    path parameter declares."""
    config = parse_config({**server_config}, {"DELTAPORT_TEST_TOKEN": "t"})
    app = create_app(config)
    checked = 0
    for document in (app.state.openapi, app.state.root_openapi):
        for path, item in document["paths"].items():
            for method, operation in item.items():
                params = [p for p in operation.get("parameters", []) if p["in"] == "path"]
                if not params:
                    assert "414" not in operation["responses"], (method, path)
                    continue
                error = operation["responses"]["414"]
                assert "REQUEST_PATH_TOO_LONG" in error["description"]
                assert error["content"]["application/json"]["schema"] == {
                    "$ref": "#/components/schemas/Error"
                }
                for param in params:
                    longest = {"queryId": 4096, "file_path": None}.get(param["name"], 767)
                    assert param["schema"].get("maxLength") == longest, (path, param)
                checked += 1
    assert checked >= 12


def test_the_document_says_what_the_server_answers_a_long_name(server: RunningServer) -> None:
    document = httpx.get(server.url + "/openapi.json").json()
    limit = document["paths"]["/shares/{share}"]["get"]["parameters"][0]["schema"]["maxLength"]
    headers = {"Authorization": f"Bearer {TOKEN}"}
    longest = httpx.get(f"{server.url}/shares/{'s' * limit}", headers=headers)
    assert longest.status_code == 404, longest.text
    over = httpx.get(f"{server.url}/shares/{'s' * (limit + 1)}", headers=headers)
    assert over.status_code == 414
    assert over.json()["errorCode"] == "REQUEST_PATH_TOO_LONG"
    assert "414" in document["paths"]["/shares/{share}"]["get"]["responses"]


def test_the_bodies_documented_are_the_structs_the_handlers_decode_and_encode() -> None:
    """Each schema is msgspec's of the protocol struct, under the name the document has
    always given it."""
    document = openapi_document("/delta-sharing", catalog=True)
    schemas = document["components"]["schemas"]
    published = {
        "QueryTable": QueryTableRequest,
        "QueryInfo": QueryInfoRequest,
        "ListShares": ListSharesResponse,
        "GetTable": GetTableResponse,
        "Table": TableItem,
        "TemporaryCredentialsRequest": TemporaryCredentialsRequest,
        "FileBatchRequest": FileBatchRequest,
        "TokenRequest": TokenRequest,
        "Error": ErrorBody,
    }
    for name, struct in published.items():
        _, components = msgspec.json.schema_components([struct])
        expected = components[struct.__name__]
        assert schemas[name]["properties"].keys() == expected["properties"].keys(), name
        assert schemas[name].get("required", []) == expected.get("required", []), name
    query = document["paths"]["/shares/{share}/schemas/{schema}/tables/{table}/query"]["post"]
    assert query["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/QueryTable"
    }
    assert schemas["QueryTable"]["properties"]["maxFiles"]["anyOf"][0]["minimum"] == 1


def test_the_served_documents_are_generated_from_the_declared_operations(
    server_config: dict[str, Any],
) -> None:
    config = parse_config({**server_config}, {"DELTAPORT_TEST_TOKEN": "t"})
    app = create_app(config)
    assert app.state.openapi == openapi_document(config.endpoint)
    assert app.state.root_openapi == root_document(config.endpoint)


def test_a_route_without_its_document_entry_or_an_entry_without_its_route_is_refused(
    server_config: dict[str, Any],
) -> None:
    """The listener checks its route table against its documents when it is built: a route
    added without its operation, or an operation whose route is gone, stops it."""
    config = parse_config({**server_config}, {"DELTAPORT_TEST_TOKEN": "t"})
    app = create_app(config)
    documents = {config.endpoint: app.state.openapi, "/": app.state.root_openapi}
    routes = list(app.routes)
    check_documented(routes, documents)

    async def endpoint(request: Any) -> Any:
        raise AssertionError

    extra = Route(config.endpoint + "/shares/{share}/secrets", endpoint, methods=["GET"])
    with pytest.raises(ValueError, match=r"without their document entry: .*secrets"):
        check_documented([*routes, extra], documents)
    gone = [r for r in routes if not (isinstance(r, Route) and r.path.endswith("/changes"))]
    with pytest.raises(ValueError, match=r"without their route: .*changes"):
        check_documented(gone, documents)
    head = [r for r in routes if not (isinstance(r, Route) and r.methods == {"HEAD"})]
    with pytest.raises(ValueError, match=r"without their route: .*'head'"):
        check_documented(head, documents)
