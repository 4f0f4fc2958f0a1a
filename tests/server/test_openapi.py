"""The sharing listener's OpenAPI documents describe exactly the routes the app serves, each
route in the document of the base path it is served under."""

from __future__ import annotations

from typing import Any

import httpx
import msgspec
from starlette.routing import Mount, Route

from deltaport.config.model import parse_config
from deltaport.server import create_app
from sharing_server import RunningServer


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
