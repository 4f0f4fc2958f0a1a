"""The admin OpenAPI document covers every route of the admin API, the provider API in
Unity Catalog's shape included, and describes the bodies those routes read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest
from starlette.routing import Route

from deltaport.admin.openapi.document import admin_openapi
from deltaport.admin.unity import bodies
from deltaport.admin.unity.bodies import Refused
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.config.loading import parse_config
from deltaport.listeners.admin_app import create_admin_app

UC = "/api/2.1/unity-catalog"


def _api_routes(tmp_path: Path) -> set[tuple[str, str]]:
    url = f"sqlite:///{tmp_path}/catalog.db"
    SqlCatalog(url)
    config = parse_config(
        {
            "catalog": url,
            "signingKey": "k",
            "admin": {"port": 9999, "tokens": ["an-admin-token-of-some-length"]},
        },
        {},
    )
    app = create_admin_app(config)
    return {
        (method.lower(), route.path)
        for route in app.routes
        if isinstance(route, Route)
        and route.path.startswith(("/api/", "/.well-known/", "/metrics", "/livez", "/readyz"))
        for method in route.methods or ()
        if method != "HEAD"
    }


def test_every_admin_api_route_is_in_the_document_and_nothing_else(tmp_path: Path) -> None:
    documented = {
        (method, path) for path, item in admin_openapi()["paths"].items() for method in item
    }
    assert _api_routes(tmp_path) == documented
    assert (("patch", f"{UC}/shares/{{share}}")) in documented


def _resolved(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def _schema(path: str, method: str) -> dict[str, Any]:
    document = admin_openapi()
    operation = document["paths"][path][method]
    schema = _resolved(document, operation["requestBody"]["content"]["application/json"]["schema"])
    return {
        **schema,
        "properties": {
            name: _inner(document, value) for name, value in schema["properties"].items()
        },
    }


def _inner(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` resolved, through an array's items and a nullable union."""
    schema = _resolved(document, schema)
    for choice in schema.get("anyOf", []):
        if choice.get("type") != "null":
            schema = _resolved(document, choice)
    if "items" in schema:
        return {**schema, "items": _inner(document, schema["items"])}
    if "properties" in schema:
        return {
            **schema,
            "properties": {k: _inner(document, v) for k, v in schema["properties"].items()},
        }
    return schema


def _accepted(kind: type[msgspec.Struct]) -> set[str]:
    """The fields the API accepts (the ones declared only to be refused by name are
    documented as refused)."""
    return {f.encode_name for f in msgspec.structs.fields(kind) if f.type is not Refused}


def _refused(schema: dict[str, Any]) -> set[str]:
    return {
        name
        for name, value in schema["properties"].items()
        if "not supported" in value.get("description", "")
    }


@pytest.mark.parametrize(
    ("path", "method", "kind"),
    [
        (f"{UC}/shares", "post", bodies.CreateShare),
        (f"{UC}/shares/{{share}}", "patch", bodies.UpdateShare),
        (f"{UC}/shares/{{share}}/permissions", "patch", bodies.UpdatePermissions),
        (f"{UC}/recipients", "post", bodies.CreateRecipient),
        (f"{UC}/recipients/{{recipient}}", "patch", bodies.UpdateRecipient),
        (f"{UC}/recipients/{{recipient}}/rotate-token", "post", bodies.RotateToken),
    ],
)
def test_the_document_describes_the_bodies_the_api_reads(
    path: str, method: str, kind: type[msgspec.Struct]
) -> None:
    schema = _schema(path, method)
    assert set(schema["properties"]) - _refused(schema) == _accepted(kind)


def test_the_document_describes_the_data_object_the_api_reads() -> None:
    update = _schema(f"{UC}/shares/{{share}}", "patch")["properties"]["updates"]["items"]
    assert set(update["properties"]) - _refused(update) == _accepted(bodies.ObjectUpdate)
    data_object = update["properties"]["data_object"]
    assert set(data_object["properties"]) - _refused(data_object) == _accepted(bodies.DataObject)
    change = _schema(f"{UC}/shares/{{share}}/permissions", "patch")["properties"]["changes"]
    items = change["items"]
    assert set(items["properties"]) - _refused(items) == _accepted(bodies.PermissionsChange)
