"""The console's management pages in a real headless Chromium (Debian's, through
Playwright) against a real catalog server: a provider's day from creating a share to
revoking a recipient, read by the official ``delta-sharing`` client with the profile the
console handed out; form errors shown next to their field with nothing half-created; a
label on every field; no secret on any page but the one that issues it; usable at 800 px.
Screenshots go to docs/images/ when DELTAPORT_SCREENSHOTS=1."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_console_browser import CHROMIUM, Watched
from test_console_browser import browser as browser

from admin_support import ADMIN_TOKEN, CatalogAdminServer, start_empty_catalog_server
from corpus import corpus_table
from deltaport.catalog.rows import RecipientSpec, TableSpec
from emulators import official_call, official_client_python, official_client_results  # noqa: F401
from sharing_server import stop_server
from waiting import wait_until

playwright = pytest.importorskip("playwright.sync_api")
pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is missing")

PARTITIONED = "dat__basic_partitioned"  # partitioned by letter: a, b, c, e and null
SECRET_SHAPES = [
    re.compile(r"dp[tsa]_[A-Za-z0-9_-]{16,}"),  # recipient tokens, client secrets, access tokens
    re.compile(r"X-Amz-Signature|[?&]sig=|[?&]sv=|AccountKey=", re.IGNORECASE),
    re.compile(re.escape(ADMIN_TOKEN)),
    re.compile("a-fixed-key-for-console-management-tests"),
]


@pytest.fixture(scope="module")
def manage_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CatalogAdminServer]:
    running = start_empty_catalog_server(tmp_path_factory.mktemp("console-manage"))
    yield running
    stop_server(running.running.sharing)


class Console(Watched):
    """A signed-in page that keeps the HTML of every page it saw, to scan for secrets."""

    def __init__(self, browser: Any, server: CatalogAdminServer, width: int = 1280) -> None:
        super().__init__(browser, server.running)
        self.page.set_viewport_size({"width": width, "height": 900})
        self.seen: dict[str, str] = {}
        self.login()

    def look(self) -> Any:
        """The page now; its HTML kept for :meth:`scan`."""

        def content() -> str:
            self.page.wait_for_load_state()
            return str(self.page.content())

        # a redirect after a form may still be under way
        html = wait_until(
            content, 5, f"{self.page.url} to settle", 0.05, ignore=(playwright.Error,)
        )
        self.seen[self.page.url] = html
        return self.page

    def open(self, path: str) -> Any:
        self.goto(path)
        return self.look()

    def submit(self, form: str) -> Any:
        with self.page.expect_navigation():
            self.page.click(f"{form} button[type=submit]")
        return self.look()

    def error(self, field: str) -> str:
        """The problem shown next to ``field`` ("" when none is)."""
        shown = self.page.locator(f".field-error[data-field={field}]")
        return (shown.text_content() or "") if shown.count() else ""

    def scan(self, issued: list[str]) -> None:
        for url, html in self.seen.items():
            for shape in SECRET_SHAPES:
                assert not shape.search(html), f"a secret on {url}: {shape.pattern}"
            for secret in issued:
                assert secret not in html, f"an issued credential on {url}"


def until(check: Callable[[], bool], what: str, seconds: float = 30) -> None:
    wait_until(check, seconds, what)


def shares_answer(sharing_url: str, token: str) -> int:
    answer = httpx.get(
        sharing_url + "/shares", headers={"Authorization": f"Bearer {token}"}, timeout=10
    )
    return answer.status_code


def test_a_day_in_the_console(
    browser: Any,
    manage_server: CatalogAdminServer,
    official_client_python: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    console = Console(browser, manage_server)
    page = console.page
    location = str(corpus_table(PARTITIONED).path)
    sharing_url = manage_server.running.sharing.url
    try:
        # a share and a corpus table in it
        console.open("/console/shares")
        page.fill("#create-share input[name=name]", "partners")
        console.submit("#create-share")
        assert page.url.endswith("/console/shares/partners")
        page.fill("#add-table input[name=schema]", "letters")
        page.fill("#add-table input[name=name]", "basic")
        page.fill("#add-table input[name=location]", location)
        console.submit("#add-table")
        assert page.locator("table.shared-tables td a", has_text="basic").count() == 1

        # a recipient, its profile downloaded from the page that shows it once
        console.open("/console/recipients")
        page.fill("#create-recipient input[name=name]", "acme")
        page.fill("#create-recipient textarea[name=properties]", "letter=a")
        with page.expect_navigation():
            page.click("#create-recipient button[type=submit]")
        console.shot("recipient-created")
        profile = tmp_path / "acme.share"
        with page.expect_download() as download:
            page.click("#profile-download")
        download.value.save_as(profile)
        first_token = json.loads(profile.read_text())["bearerToken"]
        page.click("a:text('page')")
        console.look()
        page.fill("#grant input[name=share]", "partners")
        console.submit("#grant")
        assert page.locator("table.grants td a", has_text="partners").count() == 1
        until(lambda: shares_answer(sharing_url, first_token) == 200, "able to list shares")
        table_url = f"{profile}#partners.letters.basic"
        (everything,) = official_client_results(
            official_client_python, [official_call("load_as_pandas", table_url)]
        )
        assert sorted(r["number"] for r in everything["rows"]) == [1, 2, 3, 4, 5, 6]

        # the table's readers, then a partition filter on a recipient property
        console.open("/console/shares/partners")
        readers = page.text_content("#table-partners\\.letters\\.basic td.readers") or ""
        assert "acme" in readers and "share partners" in readers
        console.shot("share")
        page.click("#table-partners\\.letters\\.basic a:text('Edit…')")
        console.look()
        page.fill("#partition_filter", "number = 1")
        page.wait_for_selector("#filter-report .field-error")
        assert "not a partition column" in (page.text_content("#filter-report") or "")
        page.fill("#partition_filter", "letter = CURRENT_RECIPIENT('letter')")
        page.wait_for_selector("#filter-report .filter-ok")
        assert "letter" in (page.text_content("#filter-report") or "")
        console.shot("table-edit")
        console.submit("#edit-table")
        assert "CURRENT_RECIPIENT" in (page.text_content("table.shared-tables") or "")

        def filtered() -> bool:
            with httpx.Client(base_url=sharing_url, timeout=10) as client:
                client.headers["Authorization"] = f"Bearer {first_token}"
                meta = client.post("/shares/partners/schemas/letters/tables/basic/query", json={})
                return (
                    meta.status_code == 200
                    and meta.text.count('"add"') + meta.text.count('"file"') == 2
                )

        until(filtered, "filtered")
        (only_a,) = official_client_results(
            official_client_python, [official_call("load_as_pandas", table_url)]
        )
        assert sorted(r["number"] for r in only_a["rows"]) == [1, 4]
        assert {r["letter"] for r in only_a["rows"]} == {"a"}

        # rotation: the old token works until its grace ends, the new one after
        console.open("/console/recipients/acme")
        page.fill("#rotate input[name=grace]", "3s")
        with page.expect_navigation():
            page.click("#rotate button[type=submit]")
        rotated = tmp_path / "acme-2.share"
        with page.expect_download() as download:
            page.click("#profile-download")
        download.value.save_as(rotated)
        second_token = json.loads(rotated.read_text())["bearerToken"]
        assert second_token != first_token
        until(lambda: shares_answer(sharing_url, second_token) == 200, "the new token working")
        assert shares_answer(sharing_url, first_token) == 200  # within its grace
        until(lambda: shares_answer(sharing_url, first_token) == 401, "the old token ended")
        assert shares_answer(sharing_url, second_token) == 200

        # revoked: the official client is refused
        recipient = console.open("/console/recipients/acme")
        assert "deltaSharing" in (recipient.text_content("table.trail") or "")
        assert recipient.get_attribute("a:text('Every audit record of acme')", "href") == (
            "/console/audit?recipient=acme"
        )
        console.shot("recipient")
        page.click("a:text('Revoke every credential…')")
        console.look()
        console.shot("confirm")
        console.submit("form.confirm-form")
        until(lambda: shares_answer(sharing_url, second_token) == 401, "revoked")
        (refused,) = official_client_results(
            official_client_python,
            [official_call("load_as_pandas", f"{rotated}#partners.letters.basic")],
        )
        assert "rows" not in refused and "401" in refused["error"]

        # all of it on the audit page and in its CSV export
        def audit_page_shows(query: str, text: str) -> bool:
            shown = console.open(f"/console/audit?{query}")
            return text in (shown.text_content("main") or "")

        until(
            lambda: audit_page_shows("recipient=acme", "deltaSharingQueriedTable"),
            "acme's queries on the audit page",
        )
        for change in ("createShare", "updatePermissions", "rotateRecipientToken"):
            query = f"operation={change}"
            until(lambda q=query: audit_page_shows(q, "token-1"), change)
        revoked = "operation=revokeRecipientTokens"
        until(lambda: audit_page_shows(revoked, "token-1"), "the revocation")
        console.open("/console/audit")
        with page.expect_download() as download:
            page.click("#export-csv")
        exported = tmp_path / "audit.csv"
        download.value.save_as(exported)
        text = exported.read_text()
        for operation in ("createShare", "createRecipient", "rotateRecipientToken"):
            assert operation in text
        assert "deltaSharingQueriedTable" in text and "acme" in text
        assert first_token not in text and second_token not in text

        console.open("/console/shares")
        console.shot("shares")
        console.open("/console/recipients")
        console.shot("recipients")
        console.scan([first_token, second_token])
        console.check_all_local()
    finally:
        console.context.close()

    # every change is an admin action of the signed-in admin token, in the audit log
    wanted = {"createShare", "updateShare", "createRecipient", "updatePermissions"}
    wanted |= {"rotateRecipientToken", "revokeRecipientTokens"}

    def recorded() -> set[str]:
        with manage_server.running.api() as api:
            records = api.get("/api/audit", params={"limit": 1000}).json()["records"]
        return {r["operation"] for r in records if r.get("admin") == "token-1"}

    until(lambda: wanted <= recorded(), "audited")


def _names(manage_server: CatalogAdminServer) -> tuple[set[str], set[str], set[str]]:
    contents = manage_server.catalog.contents()
    return (
        {s.name for s in contents.shares},
        {f"{t.share}.{t.schema}.{t.name}" for t in contents.tables},
        {r.name for r in contents.recipients.values()},
    )


def test_form_errors_are_shown_next_to_their_field_and_nothing_is_half_created(
    browser: Any,
    manage_server: CatalogAdminServer,
) -> None:
    manage_server.catalog.create_share("taken")
    manage_server.catalog.create_recipient("taken-recipient")
    console = Console(browser, manage_server)
    page = console.page
    before = _names(manage_server)
    try:
        console.open("/console/shares")
        page.fill("#create-share input[name=name]", "taken")
        console.submit("#create-share")
        assert "exists already" in console.error("name")

        console.open("/console/shares/taken")
        page.fill("#add-table input[name=schema]", "s")
        page.fill("#add-table input[name=name]", "t")
        page.fill("#add-table input[name=location]", "/no/such/table")
        console.submit("#add-table")
        assert "cannot be shared" in console.error("location")
        assert page.input_value("#add-table input[name=location]") == "/no/such/table"

        page.fill("#add-table input[name=location]", str(corpus_table(PARTITIONED).path))
        page.fill("#partition_filter", "number = 1")
        console.submit("#add-table")
        assert "not a partition column" in console.error("partition_filter")
        assert console.error("location") == ""
        console.shot("form-error")

        console.open("/console/recipients")
        page.fill("#create-recipient input[name=name]", "new-recipient")
        page.fill("#create-recipient textarea[name=ip_access_list]", "10.0.0.1/8")
        console.submit("#create-recipient")
        assert "host bits set" in console.error("ip_access_list")
        page.fill("#create-recipient textarea[name=ip_access_list]", "")
        page.fill("#create-recipient input[name=name]", "taken-recipient")
        console.submit("#create-recipient")
        assert "exists already" in console.error("name")

        console.open("/console/recipients/taken-recipient")
        page.fill("#ip-access-list textarea", "192.168.0.0/33")
        console.submit("#ip-access-list")
        assert "not an IP address or CIDR range" in console.error("ip_access_list")

        # a form whose CSRF token is not the session's changes nothing
        console.open("/console/shares")
        page.evaluate("document.querySelector('#create-share input[name=csrf]').value = 'forged'")
        page.fill("#create-share input[name=name]", "forged-share")
        console.submit("#create-share")
        assert "Refused" in (page.text_content("h1") or "")
        console.scan([])
    finally:
        console.context.close()
    assert _names(manage_server) == before
    recipient = manage_server.catalog.contents().recipients["taken-recipient"]
    assert recipient.ip_access_list == ()


UNLABELLED = """() => [...document.querySelectorAll('input, select, textarea')]
    .filter(e => e.type !== 'hidden' && e.labels.length === 0)
    .map(e => e.name || e.id)"""


@pytest.mark.parametrize("width", [1280, 800])
def test_every_field_has_a_label_and_every_page_fits(
    browser: Any,
    manage_server: CatalogAdminServer,
    width: int,
) -> None:
    catalog = manage_server.catalog
    share, recipient = f"labels-{width}", f"reader-{width}"
    catalog.create_share(share)
    catalog.add_table(share, "s", "t", TableSpec(str(corpus_table(PARTITIONED).path)))
    catalog.create_recipient(recipient, RecipientSpec(properties={"letter": "a"}))
    catalog.grant(share, recipient)
    paths = [
        "/console/shares",
        f"/console/shares/{share}",
        f"/console/shares/{share}/schemas/s/tables/t/edit",
        f"/console/shares/{share}/schemas/s/tables/t/remove",
        f"/console/shares/{share}/schemas/s/drop",
        f"/console/shares/{share}/drop",
        "/console/recipients",
        f"/console/recipients/{recipient}",
        f"/console/recipients/{recipient}/revoke",
        f"/console/recipients/{recipient}/delete",
        f"/console/recipients/{recipient}/grants/{share}/revoke",
    ]
    console = Console(browser, manage_server, width)
    try:
        for path in paths:
            page = console.open(path)
            assert page.locator("form").count() >= 1, path
            assert page.evaluate(UNLABELLED) == [], path
            overflow = page.evaluate(
                "document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
            assert overflow <= 0, f"{path} is {overflow} px too wide at {width} px"
        # the keyboard reaches the first field of the page's first form
        console.open(f"/console/recipients/{recipient}")
        for _ in range(30):
            page.keyboard.press("Tab")
            if page.evaluate("document.activeElement.name") == "share":
                break
        assert page.evaluate("document.activeElement.name") == "share"
        if width == 800:
            console.shot("recipient-800")
        console.scan([])
        console.check_all_local()
    finally:
        console.context.close()
