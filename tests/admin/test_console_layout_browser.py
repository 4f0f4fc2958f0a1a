"""The console in a real headless Chromium: one navigation bar on every page, and every
column's header aligned as its cells are (numbers right-aligned under right-aligned
headers)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest
from deltalake import write_deltalake
from test_console_browser import CHROMIUM, Watched
from test_console_browser import browser as browser

from admin_support import CatalogAdminServer, start_empty_catalog_server
from deltaport.cli import main as cli
from sharing_server import stop_server
from waiting import wait_until

playwright = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is missing")

NAVIGATION = ["Overview", "Tables", "Shares", "Recipients", "Diff", "Audit log"]
MISALIGNED = """() => [...document.querySelectorAll('table')].flatMap(t => {
  const heads = [...t.querySelectorAll('thead th')];
  const row = t.querySelector('tbody tr');
  if (!row || row.children.length !== heads.length) return [];
  return heads.map((h, i) => [h.textContent.trim(), getComputedStyle(h).textAlign,
                              getComputedStyle(row.children[i]).textAlign])
              .filter(([, head, cell]) => head !== cell);
})"""


@pytest.fixture(scope="module")
def console_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CatalogAdminServer]:
    tmp = tmp_path_factory.mktemp("console-layout")
    running = start_empty_catalog_server(tmp)
    table = tmp / "orders"
    write_deltalake(str(table), pa.table({"id": [1, 2, 3], "amount": [1.5, 2.0, 3.25]}))
    write_deltalake(str(table), pa.table({"id": [4], "amount": [9.0]}), mode="append")
    url = f"sqlite:///{tmp}/catalog.db"  # as start_empty_catalog_server makes it
    for command in (
        ["share", "create", "lake"],
        ["table", "add", "lake.default.orders", str(table), "--history"],
        ["recipient", "create", "acme", "-o", str(tmp / "acme.share")],
        ["share", "grant", "lake", "--to", "acme"],
    ):
        assert cli([*command, "--catalog", url]) == 0, command
    yield running
    stop_server(running.running.sharing)


def _pages(console: Watched) -> dict[str, Any]:
    paths = [
        "/console/",
        "/console/tables",
        "/console/shares",
        "/console/shares/lake",
        "/console/recipients",
        "/console/recipients/acme",
        "/console/diff",
        "/console/audit",
        "/console/tables/lake.default.orders",
        "/console/tables/lake.default.orders/history",
        "/console/tables/lake.default.orders/files",
        "/console/tables/lake.default.orders/changes?start=0&end=1",
    ]
    seen = {}
    for path in paths:
        answer = console.goto(path)
        assert answer is not None and answer.status == 200, path
        seen[path] = {
            "navigation": console.page.eval_on_selector_all(
                "header.top nav a", "links => links.map(a => a.textContent.trim())"
            ),
            "misaligned": console.page.evaluate(MISALIGNED),
        }
    return seen


def test_every_page_has_one_navigation_and_aligned_headers(
    browser: Any, console_server: CatalogAdminServer
) -> None:
    console = Watched(browser, console_server.running)
    try:
        console.login()
        wait_until(  # the sharing listener's catalog follows the commands
            lambda: "lake" in (console.goto("/console/shares").text() or ""),
            30,
            "the table on the shares page",
            0.5,
        )
        seen = _pages(console)
    finally:
        console.context.close()
    for path, found in seen.items():
        assert found["navigation"] == NAVIGATION, (path, found["navigation"])
        assert found["misaligned"] == [], (path, found["misaligned"])
