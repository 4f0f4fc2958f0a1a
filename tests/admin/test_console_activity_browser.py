"""The console's pages in Debian's headless Chromium (Playwright) on a catalog server with
an audit log: every form field has a label, no page overflows at 1280 or 800 pixels wide,
Tab reaches every control in document order, and no page or export the browser is given
holds a secret. Screenshots of the overview and the audit log go to docs/images/."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from test_console_browser import CHROMIUM, Watched, browser

from activity_support import ActivityServer, activity_server

__all__ = ["activity_server", "browser"]

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is missing")

PAGES = (
    "/console/",
    "/console/tables",
    "/console/tables/sales.eu.orders",
    "/console/tables/sales.eu.orders/history",
    "/console/tables/sales.eu.orders/files",
    "/console/tables/lab.corpus.dvcm/rows",
    "/console/tables/sales.eu.orders/changes?start=0&end=2",
    "/console/diff?left=sales.eu.orders&right=sales.eu.orders_v2&key=id",
    "/console/diff",
    "/console/audit",
    "/console/audit?recipient=acme",
    "/console/audit?status=abc",
)
REFUSED = {"/console/audit?status=abc"}
WIDTHS = (1280, 800)
SIGNED_URL = re.compile(r"X-Amz-|X-Goog-|[?&](?:sig|se|sp|sv|skoid)=|Signature=|dpt_[\w-]{16}")

UNLABELLED = """() => [...document.querySelectorAll('input, select, textarea')]
  .filter(e => e.type !== 'hidden')
  .filter(e => e.labels.length === 0 && !e.getAttribute('aria-label'))
  .map(e => e.outerHTML)"""
FOCUSABLE = """() => [...document.querySelectorAll('a[href], button, input, select, textarea')]
  .filter(e => e.type !== 'hidden' && !e.disabled && e.getClientRects().length > 0)
  .map((e, i) => { e.dataset.k = String(i); return String(i); })"""


def _secrets_in(server: ActivityServer, text: str) -> list[str]:
    found = [s for s in server.secrets if s in text]
    return found + SIGNED_URL.findall(text)


def _tab_order(page: Any, count: int) -> list[str]:
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    reached = []
    for _ in range(count):
        page.keyboard.press("Tab")
        reached.append(page.evaluate("() => document.activeElement.dataset.k || ''"))
    return reached


def test_every_page_is_labelled_fits_800_pixels_and_is_reached_by_tab(
    browser: Any, activity_server: ActivityServer
) -> None:
    watched = Watched(browser, activity_server.running)
    page = watched.page
    bodies: list[str] = []
    page.on(
        "response", lambda r: bodies.append(r.text()) if r.ok and "/static/" not in r.url else None
    )
    try:
        watched.login()
        assert page.url.endswith("/console/")
        watched.shot("overview")
        for path in PAGES:
            for width in WIDTHS:
                page.set_viewport_size({"width": width, "height": 900})
                answer = watched.goto(path)
                assert answer.status == (400 if path in REFUSED else 200), path
                if path in REFUSED:  # the browser logs a 400 as an error: expected here
                    watched.console_errors.clear()
                assert page.evaluate(UNLABELLED) == [], path
                wide = page.evaluate("() => [document.documentElement.scrollWidth, innerWidth]")
                assert wide[0] <= wide[1], (path, width, wide)
            controls = page.evaluate(FOCUSABLE)
            assert _tab_order(page, len(controls)) == controls, path
            bodies.append(page.content())
        page.set_viewport_size({"width": 1280, "height": 900})
        watched.goto("/console/audit?recipient=acme")
        watched.shot("audit")
        for link in ("#export-csv", "#export-jsonl"):
            with page.expect_download() as download:
                page.click(link)
            bodies.append(Path(download.value.path()).read_text(encoding="utf-8"))
        assert "deltaSharingQueriedTable" in bodies[-1] and bodies[-2].startswith("time,id,")
        watched.check_all_local()
    finally:
        watched.context.close()
    leaked = {i: _secrets_in(activity_server, body) for i, body in enumerate(bodies)}
    assert {i: found for i, found in leaked.items() if found} == {}
    assert len(bodies) > len(PAGES)


def test_a_filter_typed_in_the_form_opens_a_link_that_can_be_shared(
    browser: Any, activity_server: ActivityServer
) -> None:
    watched = Watched(browser, activity_server.running)
    page = watched.page
    try:
        watched.login()
        watched.goto("/console/audit")
        page.fill("input[name=recipient]", "globex")
        page.select_option("select[name=operation]", "deltaSharingQueriedTable")
        page.click("form.filters button[type=submit]")
        query = parse_qs(urlsplit(page.url).query)
        assert query == {"recipient": ["globex"], "operation": ["deltaSharingQueriedTable"]}
        rows = page.locator("table.audit tbody tr")
        assert rows.count() == 1
        assert "lab.corpus.dvcm" in (rows.first.text_content() or "")
        page.fill("input[name=since]", "last tuesday")
        with page.expect_navigation() as navigation:
            page.click("form.filters button[type=submit]")
        assert navigation.value.status == 400
        assert "not an ISO 8601 time" in (page.text_content("#since-error") or "")
        assert page.get_attribute("input[name=since]", "aria-invalid") == "true"
    finally:
        watched.context.close()
