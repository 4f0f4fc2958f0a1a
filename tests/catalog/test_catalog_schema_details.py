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

from deltaport.cli import main as cli
from postgres import postgres_server, postgres_url  # noqa: F401
from sharing_server import TOKEN, start_server, stop_server

SHOWN = {"displayName": "Sales, EU", "comment": "daily at 6", "properties": {"owner": "ops"}}
NONE = {"displayName": None, "comment": None, "properties": None}


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
