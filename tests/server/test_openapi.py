"""The OpenAPI document describes exactly the routes the app serves."""

from __future__ import annotations

from typing import Any

import httpx
import msgspec
from starlette.routing import Mount, Route

from deltaport.config.model import parse_config
from deltaport.server import create_app
from sharing_server import RunningServer

PROBES = ("/livez", "/readyz")


def served_operations(app: Any, endpoint: str) -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()

    def visit(routes: list[Any], prefix: str) -> None:
        for route in routes:
            if isinstance(route, Mount):
                visit(route.routes, prefix + route.path)
            elif isinstance(route, Route):
                path = (prefix + route.path).replace("{file_path:path}", "{file_path}")
                if path not in PROBES:  # at the listener's root (a path-level server)
                    assert path.startswith(endpoint), path
                    path = path[len(endpoint) :]
                methods = set(route.methods or ())
                if methods != {"HEAD"}:
                    methods.discard("HEAD")  # Starlette adds HEAD to every GET route
                for method in methods:
                    out.add((method.lower(), path))

    visit(app.routes, "")
    return out


def documented_operations(document: dict[str, Any]) -> set[tuple[str, str]]:
    return {
        (method, path)
        for path, item in document["paths"].items()
        for method in item
        if method != "servers"
    }


def test_document_matches_route_table(server_config: dict[str, Any]) -> None:
    config = parse_config(
        {**server_config, "endpoint": "/api/v2/sharing"}, {"DELTAPORT_TEST_TOKEN": "t"}
    )
    app = create_app(config)
    document = app.state.openapi
    served = served_operations(app, "/api/v2/sharing")
    assert served == documented_operations(document)
    assert ("post", "/shares/{share}/schemas/{schema}/tables/{table}/query") in served
    assert ("head", "/shares/{share}/schemas/{schema}/tables/{table}") in served
    for path, item in document["paths"].items():
        operations = [op for key, op in item.items() if key != "servers"]
        names = {
            p["name"] for op in operations for p in op.get("parameters", []) if p["in"] == "path"
        }
        assert names == {seg[1:-1] for seg in path.split("/") if seg.startswith("{")}, path


def test_served_document(server: RunningServer) -> None:
    response = httpx.get(server.url + "/openapi.json")
    assert response.status_code == 200
    document = msgspec.json.decode(response.content)
    assert document["openapi"].startswith("3.")
    assert document["servers"] == [{"url": "/delta-sharing"}]
    assert "/shares" in document["paths"]
