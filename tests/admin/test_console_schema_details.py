"""The console's share page shows what recipients see of each schema (display name,
comment, properties) and changes it, audited as the session's admin token; a refused form
keeps what was typed and changes nothing."""

from __future__ import annotations

import html
import re
import time
from collections.abc import Iterator

import httpx
import pytest

from admin_support import CatalogAdminServer, login, start_empty_catalog_server
from corpus import corpus_table
from deltaport.catalog.rows import SchemaRow, TableSpec
from sharing_server import stop_server

PAGE = "/console/shares/notes"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CatalogAdminServer]:
    running = start_empty_catalog_server(tmp_path_factory.mktemp("console-schema-details"))
    running.catalog.create_share("notes")
    location = str(corpus_table("dat__basic_partitioned").path)
    running.catalog.add_table("notes", "EU", "t", TableSpec(location))
    yield running
    stop_server(running.running.sharing)


def _post(client: httpx.Client, path: str, **fields: str) -> httpx.Response:
    found = re.search(r'name="csrf" value="([^"]+)"', client.get(PAGE).text)
    assert found
    return client.post(path, data={"csrf": found.group(1), **fields})


def test_the_share_page_changes_a_schema(server: CatalogAdminServer) -> None:
    with login(server.running) as console:
        answer = _post(
            console,
            f"{PAGE}/schemas/eu",
            display_name="Europe <EU>",
            comment="daily",
            properties="owner=ops\n\ntier=gold",
        )
        assert answer.status_code == 303, answer.text
        assert answer.headers["location"] == f"{PAGE}#schema-eu"
        (share,) = server.catalog.contents().shares
        expected = SchemaRow("daily", "Europe <EU>", (("owner", "ops"), ("tier", "gold")))
        assert share.schema("EU") == expected
        shown = console.get(PAGE).text
        assert "Europe &lt;EU&gt;" in shown and "<EU>" not in shown
        assert "daily" in shown and "owner=ops" in shown

        before = server.catalog.generation()
        refused = _post(console, f"{PAGE}/schemas/EU", comment="kept", properties="novalue")
        assert refused.status_code == 400
        assert "write name=value" in html.unescape(refused.text)
        assert 'value="kept"' in refused.text
        missing = _post(console, f"{PAGE}/schemas/nowhere", comment="x")
        assert missing.status_code == 400
        assert "no schema notes.nowhere" in html.unescape(missing.text)
        assert server.catalog.generation() == before  # nothing changed

    deadline = time.monotonic() + 30
    while True:
        with server.running.api() as api:
            found = api.get("/api/audit", params={"operation": "updateShare"}).json()
        mine = [r for r in found["records"] if r.get("share") == "notes"]
        if len(mine) == 3 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert sorted(r["status"] for r in mine) == [200, 400, 404]
    assert {r["admin"] for r in mine} == {"token-1"}
