"""The admin listener's served OpenAPI document keeps every promise of the hand-written one
it replaced (``admin_openapi_before.json``, fetched from the app before the change): each
path and method, each parameter, each status and media type, and each property of each
request and response body, nested ones included. The generated document may add, never
drop. And the app refuses to build when its routes and its document disagree."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.routing import Route

from admin_support import CatalogAdminServer
from deltaport.admin.openapi import document
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.config.loading import parse_config
from deltaport.config.model import ServerConfig
from deltaport.listeners import admin_app
from deltaport.protocol.openapi import Answer, Operation

BEFORE = Path(__file__).with_name("admin_openapi_before.json")


@pytest.fixture(scope="module")
def served(catalog_admin_server: CatalogAdminServer) -> dict[str, Any]:
    """The document a real ``deltaport serve --catalog`` serves on its admin listener."""
    response = httpx.get(catalog_admin_server.running.admin + "/api/openapi.json", timeout=60)
    assert response.status_code == 200
    document: dict[str, Any] = response.json()
    return document


def _resolved(schema: Any, document: dict[str, Any], seen: frozenset[str]) -> Any:
    ref = schema.get("$ref") if isinstance(schema, dict) else None
    if ref is None or ref in seen:
        return schema
    target = document
    for part in ref.removeprefix("#/").split("/"):
        target = target[part]
    return _resolved(target, document, seen | {ref})


def _properties(
    schema: Any, document: dict[str, Any], where: str = "", seen: frozenset[str] = frozenset()
) -> Iterator[str]:
    """Each property a schema declares, as a dotted path (``[]`` for array items)."""
    if isinstance(schema, dict) and "$ref" in schema:
        if schema["$ref"] in seen:
            return
        seen = seen | {schema["$ref"]}
    schema = _resolved(schema, document, frozenset())
    if not isinstance(schema, dict):
        return
    for name, value in schema.get("properties", {}).items():
        yield f"{where}.{name}"
        yield from _properties(value, document, f"{where}.{name}", seen)
    if isinstance(schema.get("items"), dict):
        yield from _properties(schema["items"], document, where + "[]", seen)
    if isinstance(schema.get("additionalProperties"), dict):
        yield from _properties(schema["additionalProperties"], document, where + "{}", seen)
    for key in ("anyOf", "oneOf", "allOf"):
        for each in schema.get(key, []):
            yield from _properties(each, document, where, seen)


def _promises(document: dict[str, Any]) -> set[str]:
    """Everything a document declares that a client may rely on, one string each."""
    out: set[str] = set()
    for path, item in document["paths"].items():
        for method, operation in item.items():
            at = f"{method.upper()} {path}"
            out.add(at)
            for parameter in operation.get("parameters", []):
                out.add(f"{at} parameter {parameter['in']}:{parameter['name']}")
            body = operation.get("requestBody")
            if body is not None:
                for media, content in body["content"].items():
                    out.add(f"{at} request {media}")
                    schema = content.get("schema", {})
                    out |= {f"{at} request {p}" for p in _properties(schema, document)}
            for status, answer in operation["responses"].items():
                out.add(f"{at} {status}")
                for media, content in answer.get("content", {}).items():
                    out.add(f"{at} {status} {media}")
                    schema = content.get("schema", {})
                    out |= {f"{at} {status} {p}" for p in _properties(schema, document)}
    return out


def test_the_fixture_holds_promises() -> None:
    promises = _promises(json.loads(BEFORE.read_text()))
    assert "GET /api/diff" in promises
    assert "GET /api/diff 200 .results[].operation_type" in promises
    assert "PATCH /api/2.1/unity-catalog/shares/{share} request .updates[].data_object.name" in (
        promises
    )
    assert len(promises) > 500


def test_the_served_document_keeps_every_promise_of_the_old_one(served: dict[str, Any]) -> None:
    dropped = _promises(json.loads(BEFORE.read_text())) - _promises(served)
    assert sorted(dropped) == []


def test_the_served_document_is_openapi_3_1(served: dict[str, Any]) -> None:
    assert served["openapi"] == "3.1.0"
    assert served["security"] == [{"adminToken": []}]
    assert served["components"]["securitySchemes"]["adminToken"] == {
        "type": "http",
        "scheme": "bearer",
    }


def _config(tmp_path: Path, catalog: bool = True) -> ServerConfig:
    url = f"sqlite:///{tmp_path}/catalog.db"
    SqlCatalog(url)
    admin = {"admin": {"port": 9999, "tokens": ["an-admin-token-of-some-length"]}}
    return parse_config(
        {"catalog": url, "signingKey": "k", **admin}
        if catalog
        else {"signingKey": "k", "shares": [], **admin},
        {},
    )


@pytest.mark.parametrize("catalog", [True, False])
def test_the_app_builds_when_its_routes_are_documented(tmp_path: Path, catalog: bool) -> None:
    app = admin_app.create_admin_app(_config(tmp_path, catalog))
    paths = {r.path for r in app.routes if isinstance(r, Route)}
    assert ("/api/catalog" in paths) is catalog
    assert {"/api/diff", "/metrics", "/.well-known/databricks-config"} <= paths


def test_the_app_refuses_to_build_with_a_route_the_document_lacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    without_audit = tuple(op for op in document.WITH_CATALOG if op.path != "/api/audit")
    monkeypatch.setattr(admin_app, "WITH_CATALOG", without_audit)
    with pytest.raises(
        ValueError, match=r"routes without their document entry: \[\('get', '/api/audit'\)\]"
    ):
        admin_app.create_admin_app(_config(tmp_path))


def test_the_app_refuses_to_build_with_a_document_entry_without_its_route(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ghost = Operation("get", "/api/ghost", "ghost", "Nothing serves it", (Answer(200, "-"),))
    monkeypatch.setattr(admin_app, "ALWAYS_SERVED", (*document.ALWAYS_SERVED, ghost))
    with pytest.raises(
        ValueError, match=r"document entries without their route: \[\('get', '/api/ghost'\)\]"
    ):
        admin_app.create_admin_app(_config(tmp_path, catalog=False))
