"""The console and the diff API of a server on a catalog database (``deltaport serve
--catalog``), over HTTP against a real server process: the catalog's tables are listed,
opened and diffed by name as YAML tables are, and a diff side that names nothing is an
error that says so."""

from __future__ import annotations

import re
from pathlib import Path

import markupsafe
import pytest

from admin_support import CATALOG_TABLES, AdminServer, CatalogAdminServer, login
from deltaport.catalog.rows import TableSpec
from deltaport.direct import describe_table, table_history

TABS = ("", "/history", "/files", "/rows", "/changes")


def test_the_tables_page_lists_the_catalogs_tables(
    catalog_admin_server: CatalogAdminServer,
) -> None:
    with login(catalog_admin_server.running) as client:
        home = client.get("/console/tables")
    assert home.status_code == 200
    links = re.findall(r'href="/console/tables/([^"]+)"', home.text)
    assert links == list(CATALOG_TABLES)
    assert "No tables are shared yet." not in home.text


@pytest.mark.parametrize("name", list(CATALOG_TABLES))
def test_every_tab_of_a_catalog_table_opens(
    catalog_admin_server: CatalogAdminServer, admin_tables: dict[str, Path], name: str
) -> None:
    location = str(admin_tables[CATALOG_TABLES[name]])
    with login(catalog_admin_server.running) as client:
        answers = {tab: client.get(f"/console/tables/{name}{tab}") for tab in TABS}
    assert {tab: a.status_code for tab, a in answers.items()} == dict.fromkeys(TABS, 200)
    version = re.search(r'<dd id="version">(\d+)</dd>', answers[""].text)
    assert version and int(version.group(1)) == describe_table(location)["version"]
    shown = re.findall(r"<tr>\s*<td class=\"num\">(\d+)</td>", answers["/history"].text)
    assert shown == [str(e["version"]) for e in table_history(location)][:25]


def test_a_table_shared_while_serving_shows_at_once(
    catalog_admin_server: CatalogAdminServer, admin_tables: dict[str, Path]
) -> None:
    catalog = catalog_admin_server.catalog
    catalog.add_table("sales", "eu", "late", TableSpec(str(admin_tables["parted"])))
    try:
        with login(catalog_admin_server.running) as client:
            assert "/console/tables/sales.eu.late" in client.get("/console/tables").text
            assert client.get("/console/tables/sales.eu.late").status_code == 200
            catalog.remove_table("sales", "eu", "late")
            assert client.get("/console/tables/sales.eu.late").status_code == 404
    finally:
        if any(t.name == "late" for t in catalog.contents().tables):
            catalog.remove_table("sales", "eu", "late")


def test_catalog_tables_diff_by_name(
    catalog_admin_server: CatalogAdminServer, admin_tables: dict[str, Path]
) -> None:
    by_name = {"left": "sales.eu.orders", "right": "sales.eu.orders_v2"}
    by_location = {"left": str(admin_tables["left"]), "right": str(admin_tables["right"])}
    running = catalog_admin_server.running
    with running.api() as api:
        named = api.get("/api/diff", params=by_name).json()
        located = api.get("/api/diff", params=by_location).json()
    assert named["table_diff_type"] == "changed"
    assert (
        [e["id"] for e in named["results"]]
        == [e["id"] for e in located["results"]]
        == [
            "3",
            "2",
        ]
    )
    with login(running) as client:
        page = client.get("/console/diff", params=by_name | {"key": "id"})
    assert page.status_code == 200
    assert '<span class="diff-type diff-changed" id="diff-type">changed</span>' in page.text
    assert 'id="row-counts"' in page.text


@pytest.fixture(params=["catalog", "yaml"])
def served(request: pytest.FixtureRequest) -> tuple[AdminServer, str]:
    """A server on a catalog database and one on a YAML file, each with a table it shares."""
    if request.param == "catalog":
        on_catalog: CatalogAdminServer = request.getfixturevalue("catalog_admin_server")
        return on_catalog.running, "sales.eu.orders"
    on_yaml: AdminServer = request.getfixturevalue("admin_server")
    return on_yaml, "lake.branches.left"


@pytest.mark.parametrize("side", ["left", "right"])
def test_a_diff_side_naming_nothing_is_an_error(served: tuple[AdminServer, str], side: str) -> None:
    """Not a shared table and nothing at that location: 404, never a diff of an empty side."""
    server, shared = served
    params = {"left": shared, "right": shared, side: "sales.eu.no_such_table"}
    expected = (
        f"{side} 'sales.eu.no_such_table' is neither a shared table (share.schema.table) "
        "nor a location where anything exists"
    )
    with server.api() as api:
        answer = api.get("/api/diff", params=params)
    assert answer.status_code == 404
    assert answer.json() == {"errorCode": "RESOURCE_DOES_NOT_EXIST", "message": expected}
    with login(server) as client:
        page = client.get("/console/diff", params=params)
    assert page.status_code == 404
    assert f'<p class="error" role="alert">{markupsafe.escape(expected)}</p>' in page.text
    assert 'id="diff-type"' not in page.text


def test_the_log_counts_the_catalogs_shares(catalog_admin_server: CatalogAdminServer) -> None:
    log = catalog_admin_server.running.sharing.log()
    assert "serving 2 shares at" in log
