"""A schema's display name, comment and properties in the catalog: kept by a YAML import
(as a YAML server serves them) on SQLite and PostgreSQL, and changed by the CLI, locally and
through the admin API (audited), a running server following each change."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa
import pytest
import yaml
from deltalake import write_deltalake

from deltaport.catalog.rows import SchemaRow
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.cli import main as cli
from postgres import postgres_server, postgres_url  # noqa: F401
from sharing_server import TOKEN, free_port, start_server, stop_server

SHOWN = {"displayName": "Sales, EU", "comment": "daily at 6", "properties": {"owner": "ops"}}
NONE = {"displayName": None, "comment": None, "properties": None}
ADMIN = "schema-details-admin-token"


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/catalog.db"
    return str(request.getfixturevalue("postgres_url"))


def _config(tmp_path: Path) -> dict[str, Any]:
    table = tmp_path / "t"
    write_deltalake(str(table), pa.table({"id": [1, 2]}))
    return {
        "signingKey": "schema-details-key",
        "authorization": {"bearerToken": TOKEN},
        "shares": [
            {
                "name": "sales",
                "schemas": [
                    {"name": "eu", **SHOWN, "tables": [{"name": "t", "location": str(table)}]},
                    {"name": "us", "tables": [{"name": "t", "location": str(table)}]},
                ],
            }
        ],
    }


def _seen(items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {i["name"]: {k: i.get(k) for k in SHOWN} for i in items}


def _schemas(client: httpx.Client, expected: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The share's schemas as listed, once they are ``expected`` or after 30 s (a server
    follows catalog changes within its poll interval)."""
    deadline = time.monotonic() + 30
    while True:
        answer = client.get("/shares/sales/schemas")
        assert answer.status_code == 200, answer.text
        seen = _seen(answer.json()["items"])
        if seen == expected or time.monotonic() > deadline:
            return seen
        time.sleep(0.1)


def test_an_import_keeps_them_as_a_yaml_server_serves_them(url: str, tmp_path: Path) -> None:
    config = _config(tmp_path)
    expected = {"eu": SHOWN, "us": NONE}
    yaml_server = start_server(config, tmp_path / "yaml")
    try:
        with yaml_server.client() as client:
            assert _schemas(client, expected) == expected
    finally:
        stop_server(yaml_server)
    path = tmp_path / "server.yaml"
    path.write_text(yaml.safe_dump(config))
    if url.startswith("sqlite:"):
        assert cli(["catalog", "init", "--catalog", url]) == 0
    assert cli(["catalog", "import", str(path), "--catalog", url]) == 0
    server = start_server({"catalog": url, "signingKey": "schema-details-key"}, tmp_path / "db")
    try:
        with server.client() as client:
            assert _schemas(client, expected) == expected
    finally:
        stop_server(server)


def _imported(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path}/catalog.db"
    path = tmp_path / "server.yaml"
    path.write_text(yaml.safe_dump(_config(tmp_path)))
    assert cli(["catalog", "init", "--catalog", url]) == 0
    assert cli(["catalog", "import", str(path), "--catalog", url]) == 0
    return url


def test_the_cli_changes_them_locally_and_through_the_admin_api(
    tmp_path: Path, capsys: Any
) -> None:
    url = _imported(tmp_path)
    admin_port = free_port()
    config = {"catalog": url, "signingKey": "k", "admin": {"port": admin_port, "tokens": [ADMIN]}}
    server = start_server(config, tmp_path / "db")
    admin = f"http://127.0.0.1:{admin_port}"
    remote = ["--server", admin, "--admin-token", ADMIN]
    try:
        with server.client() as client:
            args = ["--display-name", "US", "--property", "tier=gold", "--property", "a=b"]
            assert cli(["schema", "set", "sales.US", *args, *remote]) == 0
            us = {"displayName": "US", "comment": None, "properties": {"tier": "gold", "a": "b"}}
            assert _schemas(client, {"eu": SHOWN, "us": us}) == {"eu": SHOWN, "us": us}
            # locally: '' removes, what is not given stays
            local = ["--comment", "", "--no-properties", "--catalog", url]
            assert cli(["schema", "set", "sales.eu", *local]) == 0
            eu = {**SHOWN, "comment": None, "properties": None}
            assert _schemas(client, {"eu": eu, "us": us}) == {"eu": eu, "us": us}
            capsys.readouterr()
            assert cli(["schema", "set", "sales.nowhere", "--comment", "x", *remote]) == 1
            assert "no schema sales.nowhere" in capsys.readouterr().err
        with httpx.Client(base_url=admin, headers={"Authorization": f"Bearer {ADMIN}"}) as api:
            path = "/api/shares/sales/schemas/us"
            answer = api.patch(path, json={"displayName": "x" * 256})
            assert answer.status_code == 400, answer.text
            assert answer.json()["errorCode"] == "INVALID_PARAMETER_VALUE"
            answer = api.patch(path, json={"properties": {"k": 1}})
            assert answer.json()["errorCode"] == "MALFORMED_REQUEST", answer.text
            answer = api.patch(path, json={"displayName": None})
            assert answer.json() == {**us, "displayName": None, "properties": us["properties"]}
            assert api.patch("/api/shares/nope/schemas/us", json={}).status_code == 404
            deadline = time.monotonic() + 30
            while True:
                found = api.get("/api/audit", params={"operation": "updateShare"}).json()
                mine = [r for r in found["records"] if r.get("share") == "sales"]
                if len(mine) >= 5 or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
            assert sorted(r["status"] for r in mine) == [200, 200, 400, 400, 404]
            assert {r["admin"] for r in mine} == {"token-1"}
    finally:
        stop_server(server)
    tables = ["table", "remove", "sales.us.t", "--catalog", url]
    assert cli(tables) == 0  # the schema's details go with its last table
    table = tmp_path / "t"
    assert cli(["table", "add", "sales.us.t", str(table), "--catalog", url]) == 0
    (share,) = SqlCatalog(url).contents().shares
    assert share.schema("us") == SchemaRow()
