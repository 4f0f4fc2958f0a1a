"""The console in a real headless Chromium (Debian's, driven by Playwright): log in, read a
table with deletion vectors and column mapping, diff two branches, and be refused when the
login, the CSRF token or the session is wrong. Every request must go to the admin listener.
Screenshots of each page go to docs/images/."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from admin_support import ADMIN_TOKEN, CATALOG_TABLES, AdminServer, CatalogAdminServer
from deltaport.direct import describe_table, read_table_batches, table_history

playwright = pytest.importorskip("playwright.sync_api")

CHROMIUM = Path("/usr/bin/chromium")
DOC_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
# screenshots replace the documentation's only when asked (DELTAPORT_SCREENSHOTS=1): a test
# run must not change tracked files
IMAGES = (
    DOC_IMAGES
    if os.environ.get("DELTAPORT_SCREENSHOTS") == "1"
    else Path(tempfile.gettempdir()) / "deltaport-screenshots"
)
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is missing")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield launched
        launched.close()


class Watched:
    """A page whose every request is recorded."""

    def __init__(self, browser: Any, server: AdminServer) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.page = self.context.new_page()
        self.requests: list[str] = []
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.console_errors: list[str] = []
        self.page.on(
            "console",
            lambda message: (
                self.console_errors.append(message.text) if message.type == "error" else None
            ),
        )
        self.server = server

    def goto(self, path: str) -> Any:
        return self.page.goto(self.server.admin + path)

    def login(self, token: str = ADMIN_TOKEN) -> None:
        self.goto("/console/login")
        self.page.fill("input[name=token]", token)
        self.page.click("button[type=submit]")

    def shot(self, name: str) -> None:
        IMAGES.mkdir(parents=True, exist_ok=True)
        IMAGES.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(IMAGES / f"console-{name}.png"), full_page=True)

    def check_all_local(self) -> None:
        outside = [u for u in self.requests if not u.startswith(self.server.admin + "/")]
        assert not outside, f"requests left the server: {outside}"
        assert not self.console_errors, self.console_errors


@pytest.fixture
def watched(browser: Any, admin_server: AdminServer) -> Iterator[Watched]:
    w = Watched(browser, admin_server)
    yield w
    w.context.close()


def test_login_and_the_table_page_of_a_dv_column_mapping_table(
    watched: Watched, admin_tables: dict[str, Path]
) -> None:
    page = watched.page
    watched.goto("/console/")
    assert page.url.endswith("/console/login")
    watched.shot("login")
    watched.login()
    assert page.url.endswith("/console/")
    watched.goto("/console/tables")
    assert page.locator("a", has_text="dvcm").count() == 1
    watched.shot("tables")

    location = str(admin_tables["dvcm"])
    info = describe_table(location)
    watched.goto("/console/tables/lake.main.dvcm")
    assert page.text_content("#version") == str(info["version"])
    features = info["protocol"].get("readerFeatures") or []
    assert page.text_content("#reader-features") == ", ".join(sorted(features))
    assert "deletionVectors" in features and "columnMapping" in features
    assert page.text_content("#num-files") == str(info["num_files"])
    schema_text = page.text_content("#schema") or ""
    for field in info["schema"]["fields"]:
        assert field["name"] in schema_text
        physical = field["metadata"]["delta.columnMapping.physicalName"]
        assert physical in schema_text
    watched.shot("table")

    watched.goto("/console/tables/lake.main.dvcm/history")
    history = table_history(location)
    shown = page.locator("table.history tbody tr td:first-child").all_text_contents()
    assert shown == [str(e["version"]) for e in history][: len(shown)]
    assert len(shown) == min(25, len(history))
    watched.shot("history")

    watched.goto("/console/tables/lake.main.dvcm/files")
    assert page.locator("table.files tbody tr").count() == min(50, info["num_files"])
    watched.shot("files")

    watched.goto("/console/tables/lake.main.dvcm/rows")
    schema, batches = read_table_batches(location, limit=20)
    expected = [r for b in batches for r in b.to_pylist()][:20]
    cells = page.locator("table.rows tbody tr").all()
    assert len(cells) == len(expected)
    for row, want in zip(cells, expected, strict=True):
        got = row.locator("td").all_text_contents()
        assert got == [_cell(want[name]) for name in schema.names]
    watched.shot("rows")

    watched.goto("/console/tables/lake.main.parted/changes?start=0&end=2")
    assert page.locator("#changes tbody tr").count() == 3
    watched.shot("changes")
    watched.check_all_local()


def _cell(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, str):
        return value
    if isinstance(value, dict | list):
        return json.dumps(value, default=str, ensure_ascii=False)
    return str(value)


def test_the_diff_page_of_two_branches_shows_what_the_cli_shows(
    watched: Watched, admin_server: AdminServer
) -> None:
    with admin_server.api() as api:
        params = {"left": "lake.branches.left", "right": "lake.branches.right"}
        commits = api.get("/api/diff", params=params).json()
        rows = api.get("/api/diff", params=params | {"rows": "true", "key": "id"}).json()
    page = watched.page
    watched.login()
    watched.goto("/console/diff")
    page.fill("input[name=left]", "lake.branches.left")
    page.fill("input[name=right]", "lake.branches.right")
    page.fill("input[name=key]", "id")
    page.click("form.diff-form button[type=submit]")
    assert page.text_content("#diff-type") == commits["table_diff_type"]
    shown = page.locator("table.commits tbody tr").all()
    assert len(shown) == len(commits["results"])
    for row, entry in zip(shown, commits["results"], strict=True):
        cells = row.locator("td").all_text_contents()
        assert cells[0] == entry["id"]
        assert cells[2] == entry["operation"]
        assert cells[3] == entry["operation_type"]
    details = page.locator("table.commits details").first
    details.locator("summary").click()
    content = json.loads(details.locator("pre").text_content() or "")
    assert content == commits["results"][0]["operation_content"]
    summary = rows["summary"]
    assert page.text_content("#row-counts") == (
        f"{summary['inserted']} inserted, {summary['deleted']} deleted, "
        f"{summary['updated']} updated"
    )
    changes = page.locator("table.row-changes tbody tr").all()
    assert [r.locator("td").first.text_content() for r in changes] == [
        c["change"] for c in rows["changes"]
    ]
    updated = page.locator("tr.row-updated td.changed")
    assert updated.count() == 1
    assert updated.locator("del").text_content() == "b"
    assert updated.locator("ins").text_content() == "B"
    watched.shot("diff")
    watched.check_all_local()


def test_a_failed_login_is_refused(watched: Watched) -> None:
    watched.login("wrong-admin-token-000000")
    assert watched.page.url.endswith("/console/login")
    assert "not valid" in (watched.page.text_content(".error") or "")
    watched.goto("/console/")
    assert watched.page.url.endswith("/console/login")


def test_a_form_without_its_csrf_token_is_refused(watched: Watched) -> None:
    page = watched.page
    watched.login()
    page.evaluate("document.querySelector('form.inline input[name=csrf]').value = 'forged'")
    page.click("form.inline button")
    assert "Refused" in (page.text_content("h1") or "")
    watched.goto("/console/")
    assert page.url.endswith("/console/")  # still signed in: the logout was refused
    page.evaluate("document.querySelector('form.inline input[name=csrf]').remove()")
    page.click("form.inline button")
    assert "Refused" in (page.text_content("h1") or "")


def test_the_console_of_a_catalog_server(
    browser: Any, catalog_admin_server: CatalogAdminServer, admin_tables: dict[str, Path]
) -> None:
    """The catalog's tables listed, opened and diffed by name, as YAML tables are."""
    watched = Watched(browser, catalog_admin_server.running)
    page = watched.page
    try:
        watched.login()
        assert page.url.endswith("/console/")
        watched.goto("/console/tables")
        listed = page.locator("main table a").all_text_contents()
        assert listed == [name.rsplit(".", 1)[1] for name in CATALOG_TABLES]
        page.click("a:text-is('orders')")
        assert page.url.endswith("/console/tables/sales.eu.orders")
        version = describe_table(str(admin_tables["left"]))["version"]
        assert page.text_content("#version") == str(version)
        watched.goto("/console/diff")
        page.fill("input[name=left]", "sales.eu.orders")
        page.fill("input[name=right]", "sales.eu.orders_v2")
        page.click("form.diff-form button[type=submit]")
        assert page.text_content("#diff-type") == "changed"
        watched.check_all_local()
        page.fill("input[name=left]", "sales.eu.no_such_table")
        with page.expect_navigation() as navigation:
            page.click("form.diff-form button[type=submit]")
        assert navigation.value.status == 404
        assert "neither a shared table" in (page.text_content(".error") or "")
        assert page.locator("#diff-type").count() == 0
    finally:
        watched.context.close()


def test_the_old_cookie_fails_after_logout(browser: Any, watched: Watched) -> None:
    page = watched.page
    watched.login()
    assert page.url.endswith("/console/")
    cookie = next(c for c in watched.context.cookies() if c["name"] == "deltaport_session")
    page.click("form.inline button")  # log out
    assert page.url.endswith("/console/login")
    # another browser given the old cookie (as if it had been copied) is not signed in
    replay = browser.new_context()
    try:
        replay.add_cookies([cookie])
        other = replay.new_page()
        other.goto(watched.server.admin + "/console/tables/lake.main.dvcm")
        assert other.url.endswith("/console/login")
    finally:
        replay.close()
