"""A share's and a shared table's display name, comment and properties in the catalog:
set by the CLI (locally and through the admin API), by the admin API (raw HTTP) and by a
YAML import, and shown to recipients in every listing and get route."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa
import pytest
import yaml
from deltalake import write_deltalake

from admin_support import start_with_admin
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.cli import main as cli
from deltaport.client import Schema, SharingClient
from sharing_server import RunningServer, stop_server
from waiting import wait_until

ADMIN_TOKEN = "catalog-details-admin-token"
SHOWN = {"displayName": "Sales data", "comment": "daily", "properties": {"owner": "ops"}}


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("details-table") / "t"
    write_deltalake(str(path), pa.table({"id": [1, 2]}))
    return path


@pytest.fixture(scope="module")
def setup(
    table: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[RunningServer, str, str]]:
    tmp = tmp_path_factory.mktemp("catalog-details")
    url = f"sqlite:///{tmp}/catalog.db"
    assert cli(["catalog", "init", "--catalog", url]) == 0
    config = {"catalog": url, "signingKey": "catalog-details-key"}
    running = start_with_admin(config, tmp / "server", ADMIN_TOKEN)
    yield running.sharing, running.admin, url
    stop_server(running.sharing)


def _remote(admin: str, *args: str) -> int:
    return cli([*args, "--server", admin, "--admin-token", ADMIN_TOKEN])


def _details_args() -> list[str]:
    return ["--display-name", "Sales data", "--comment", "daily", "--property", "owner=ops"]


def _recipient_token(admin: str, share: str, tmp_path: Path) -> str:
    profile = tmp_path / f"{share}.share"
    assert _remote(admin, "recipient", "create", f"r-{share}", "-o", str(profile)) == 0
    assert _remote(admin, "share", "grant", share, "--to", f"r-{share}") == 0
    return str(json.loads(profile.read_text())["bearerToken"])


def _seen(item: dict[str, Any]) -> dict[str, Any]:
    return {k: item.get(k) for k in SHOWN}


def _wait_for(client: httpx.Client, path: str) -> httpx.Response:
    """The sharing listener sees catalog changes shortly after they are written."""
    return wait_until(
        lambda: (answer := client.get(path)).status_code not in (401, 404) and answer,
        30,
        f"{path} to be answered",
    )


def test_set_through_the_admin_api_and_shown_to_recipients(
    setup: tuple[RunningServer, str, str], table: Path, tmp_path: Path
) -> None:
    server, admin, _ = setup
    assert _remote(admin, "share", "create", "sales", *_details_args()) == 0
    assert _remote(admin, "table", "add", "sales.s.t", str(table), *_details_args()) == 0
    token = _recipient_token(admin, "sales", tmp_path)
    with server.client(token) as client:
        share = _wait_for(client, "/shares/sales").json()["share"]
        assert _seen(share) == SHOWN
        listed = client.get("/shares").json()["items"]
        assert [_seen(s) for s in listed] == [SHOWN]
        for path in ("/shares/sales/schemas/s/tables", "/shares/sales/all-tables"):
            (item,) = client.get(path).json()["items"]
            assert _seen(item) == SHOWN
    with SharingClient(str(tmp_path / "sales.share")) as ours:
        described = ("Sales data", "daily", {"owner": "ops"})
        for item in (
            ours.get_share("sales"),
            *ours.list_shares(),
            *ours.list_all_tables("sales"),
            *ours.list_tables(Schema("s", "sales")),
        ):
            assert (item.display_name, item.comment, item.properties) == described
        (schema,) = ours.list_schemas("sales")  # a catalog schema exists through its tables
        assert (schema.display_name, schema.comment, schema.properties) == (None, None, None)
    with httpx.Client(base_url=admin, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) as api:
        catalog = api.get("/api/catalog").json()
        (share_row,) = [s for s in catalog["shares"] if s["name"] == "sales"]
        (table_row,) = [t for t in catalog["tables"] if t["name"] == "sales.s.t"]
        assert _seen(share_row) == _seen(table_row) == SHOWN


def test_the_admin_api_refuses_what_cannot_be_stored_and_writes_nothing(
    setup: tuple[RunningServer, str, str], table: Path
) -> None:
    _, admin, url = setup
    invalid, malformed = "INVALID_PARAMETER_VALUE", "MALFORMED_REQUEST"
    bad_bodies = [
        ("/api/shares", {"name": "long", "displayName": "x" * 256}, invalid),
        (
            "/api/shares",
            {"name": "many", "properties": {f"k{i}": "v" for i in range(101)}},
            invalid,
        ),
        ("/api/shares", {"name": "typed", "properties": {"k": 1}}, malformed),
        (
            "/api/tables",
            {"name": "sales.s.u", "location": str(table), "displayName": "x" * 256},
            invalid,
        ),
    ]
    with httpx.Client(base_url=admin, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}) as api:
        for path, body, code in bad_bodies:
            answer = api.post(path, json=body)
            assert answer.status_code == 400, (body, answer.text)
            assert answer.json()["errorCode"] == code, answer.text
    contents = SqlCatalog(url).contents()
    assert {s.name for s in contents.shares}.isdisjoint({"long", "many", "typed"})
    assert "u" not in {t.name for t in contents.tables}


def test_set_locally_and_by_a_yaml_import(table: Path, tmp_path: Path, capsys: Any) -> None:
    url = f"sqlite:///{tmp_path}/catalog.db"
    assert cli(["catalog", "init", "--catalog", url]) == 0
    assert cli(["share", "create", "local", *_details_args(), "--catalog", url]) == 0
    add = ["table", "add", "local.s.t", str(table), *_details_args(), "--catalog", url]
    assert cli(add) == 0
    config = {
        "shares": [
            {
                "name": "imported",
                **SHOWN,
                "schemas": [
                    {"name": "s", "tables": [{"name": "t", "location": str(table), **SHOWN}]}
                ],
            }
        ]
    }
    path = tmp_path / "server.yaml"
    path.write_text(yaml.safe_dump(config))
    assert cli(["catalog", "import", str(path), "--catalog", url]) == 0
    contents = SqlCatalog(url).contents()
    for share in contents.shares:
        assert (share.display_name, share.comment, dict(share.properties)) == (
            "Sales data",
            "daily",
            {"owner": "ops"},
        )
    for t in contents.tables:
        assert (t.display_name, t.comment, dict(t.properties)) == (
            "Sales data",
            "daily",
            {"owner": "ops"},
        )
    assert cli(["share", "create", "bad", "--property", "novalue", "--catalog", url]) == 1
    assert "--property expects KEY=VALUE" in capsys.readouterr().err
    assert "bad" not in {s.name for s in SqlCatalog(url).contents().shares}
