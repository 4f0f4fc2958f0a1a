"""The provider's surfaces ask the same resolver as the sharing API: a version past the
latest, a timestamp before the first commit, a missing table -- the sharing API's refusal
(status, errorCode, message) on the admin diff endpoint (JSON), on the console's table
pages (an error page) and on its diff page, over real HTTP on a real server. And a console
page's reads go through the resolver and its cache of open tables (counted, in process)."""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa
import pytest
from deltalake import write_deltalake

from admin_support import ADMIN_TOKEN, AdminServer, login, start_with_admin
from deltaport.catalog.model import SharedTable
from deltaport.config.loading import parse_config
from deltaport.delta import DeltaTable
from deltaport.listeners.admin_app import create_admin_app
from deltaport.sharing import TableResolver
from sharing_server import stop_server, table_entry

TABLES = "/shares/s/schemas/d/tables"
BEFORE_FIRST_COMMIT = "2000-01-01T00:00:00Z"


def write_table(location: Path) -> None:
    for version in range(2):  # versions 0 and 1
        write_deltalake(location, pa.table({"id": [version]}), mode="append")


def config_of(location: Path) -> dict[str, Any]:
    return {
        "version": 1,
        "authorization": {"bearerToken": "${DELTAPORT_TEST_TOKEN}"},
        "signingKey": "provider-surfaces",
        "shares": [
            {
                "name": "s",
                "schemas": [
                    {"name": "d", "tables": [table_entry("t", location, historyShared=True)]}
                ],
            }
        ],
    }


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AdminServer]:
    root = tmp_path_factory.mktemp("provider-surfaces")
    write_table(root / "t")
    running = start_with_admin(config_of(root / "t"), root / "server")
    yield running
    stop_server(running.sharing)


def sharing_refusal(server: AdminServer, name: str, body: dict[str, Any]) -> tuple[int, str, str]:
    with server.sharing.client() as client:
        answer = client.post(f"{TABLES}/{name}/query", json=body)
    return answer.status_code, answer.json()["errorCode"], answer.json()["message"]


def page_refusal(answer: httpx.Response) -> tuple[int, str, str]:
    """The status, errorCode and message of a console error page."""
    found = re.search(r"<h1>(\d+) · (\w+)</h1>\s*<p class=\"error\"[^>]*>(.*?)</p>", answer.text)
    assert found is not None, answer.text
    assert int(found.group(1)) == answer.status_code
    return answer.status_code, found.group(2), html.unescape(found.group(3))


VERSION_PAST_LATEST = (
    400,
    "INVALID_PARAMETER_VALUE",
    "the asked version of table s.d.t is not available",
)


def test_the_sharing_api_refuses_a_version_past_the_latest(server: AdminServer) -> None:
    assert sharing_refusal(server, "t", {"version": 7}) == VERSION_PAST_LATEST


@pytest.mark.parametrize("tab", ["", "/files", "/rows"])
def test_a_console_page_refuses_a_version_past_the_latest_alike(
    server: AdminServer, tab: str
) -> None:
    with login(server) as client:
        answer = client.get(f"/console/tables/s.d.t{tab}", params={"version": 7})
    assert page_refusal(answer) == sharing_refusal(server, "t", {"version": 7})


def test_a_console_page_refuses_a_timestamp_before_the_first_commit_alike(
    server: AdminServer,
) -> None:
    expected = sharing_refusal(server, "t", {"timestamp": BEFORE_FIRST_COMMIT})
    assert expected[:2] == (400, "INVALID_PARAMETER_VALUE")
    with login(server) as client:
        answer = client.get("/console/tables/s.d.t", params={"timestamp": BEFORE_FIRST_COMMIT})
    assert page_refusal(answer) == expected


def test_a_console_page_refuses_a_missing_table_alike(server: AdminServer) -> None:
    expected = sharing_refusal(server, "nope", {})
    assert expected[:2] == (404, "RESOURCE_DOES_NOT_EXIST")
    with login(server) as client:
        for tab in ("", "/history", "/changes"):
            assert page_refusal(client.get(f"/console/tables/s.d.nope{tab}")) == expected


def test_the_console_still_serves_a_version_the_log_holds(server: AdminServer) -> None:
    with login(server) as client:
        answer = client.get("/console/tables/s.d.t/files", params={"version": 0})
    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize(
    "params",
    [
        {"left": "s.d.t", "right": "s.d.t", "left_version": 0, "right_version": 7},
        {"left": "s.d.t", "right": "s.d.t", "rows": "true", "right_version": 7},
        {"left": "s.d.t", "right": "s.d.t", "rows": "true", "left_version": 7, "right_version": 1},
    ],
)
def test_the_admin_diff_refuses_a_version_past_the_latest_alike(
    server: AdminServer, params: dict[str, Any]
) -> None:
    with server.api() as api:
        answer = api.get("/api/diff", params=params)
    refusal = (answer.status_code, answer.json()["errorCode"], answer.json()["message"])
    assert refusal == sharing_refusal(server, "t", {"version": 7})


def test_the_console_diff_page_refuses_a_version_past_the_latest_alike(
    server: AdminServer,
) -> None:
    status, _, message = sharing_refusal(server, "t", {"version": 7})
    params = {"left": "s.d.t", "right": "s.d.t", "left_version": 0, "right_version": 7}
    with login(server) as client:
        answer = client.get("/console/diff", params=params)
    assert answer.status_code == status
    found = re.search(r'<p class="error" role="alert">(.*?)</p>', answer.text)
    assert found is not None, answer.text
    assert html.unescape(found.group(1)) == message


def test_the_admin_diff_still_diffs_versions_the_log_holds(server: AdminServer) -> None:
    with server.api() as api:
        answer = api.get(
            "/api/diff",
            params={"left": "s.d.t", "right": "s.d.t", "left_version": 0, "right_version": 1},
        )
    assert answer.status_code == 200, answer.text
    assert [r["id"] for r in answer.json()["results"]] == ["1"]


class CountedOpens:
    def __init__(self) -> None:
        self.tables: list[str] = []
        self.opened: set[int] = set()


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> CountedOpens:
    count = CountedOpens()
    delta_table = TableResolver.delta_table

    def counting(self: TableResolver, table: SharedTable) -> DeltaTable:
        count.tables.append(f"{table.share}.{table.schema}.{table.name}")
        opened = delta_table(self, table)
        count.opened.add(id(opened))
        return opened

    monkeypatch.setattr(TableResolver, "delta_table", counting)
    return count


def test_a_console_page_reads_through_the_resolver(tmp_path: Path, counted: CountedOpens) -> None:
    write_table(tmp_path / "t")
    raw = {**config_of(tmp_path / "t"), "admin": {"port": 1, "tokens": [ADMIN_TOKEN]}}
    app = create_admin_app(parse_config(raw, {"DELTAPORT_TEST_TOKEN": "x"}))

    async def run() -> list[int]:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=True)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            await client.get("/console/login")
            csrf = client.cookies["deltaport_login_csrf"]
            signed = await client.post("/console/login", data={"csrf": csrf, "token": ADMIN_TOKEN})
            assert signed.status_code == 303
            paths = ("/console/tables/s.d.t", "/console/tables/s.d.t/history")
            return [(await client.get(path)).status_code for path in paths]

    assert asyncio.run(run()) == [200, 200]
    assert len(counted.tables) >= 2 and set(counted.tables) == {"s.d.t"}
    assert len(counted.opened) == 1  # one open table, from the cache every time after the first
