"""The console's management pages read a page of the catalog, never the whole of it: the
rows each page reads from the database are counted (every statement's answer, on the
admin app's own SQLite catalog) and must not grow when the catalog grows tenfold; the
tables' list, read again after a change, reads the tables and not the recipients; and the
pages of shares, recipients and tables list each one exactly once, in order."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from deltaport.catalog.database.connection import Database, Row, Transaction
from deltaport.catalog.rows import RecipientSpec, RotationSpec, TableSpec
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.config.loading import parse_config
from deltaport.console import table_pages
from deltaport.console.manage import recipient_pages, share_pages
from deltaport.listeners.admin_app import create_admin_app

ADMIN_TOKEN = "page-reads-admin-token-0123"
PAGES = (
    "/console/shares",
    "/console/shares?offset=100",
    "/console/shares/s0001",
    "/console/shares/s0001/filter-check",
    "/console/shares/s0001/drop",
    "/console/shares/s0001/schemas/d/drop",
    "/console/shares/s0001/schemas/d/tables/t/edit",
    "/console/recipients",
    "/console/recipients?offset=100",
    "/console/recipients/r00001",
    "/console/recipients/r00001/delete",
    "/console/recipients/r00001/revoke",
    "/console/recipients/r00001/grants/s0001/revoke",
)


class RowCount:
    """Rows answered by every statement run on any catalog database while it is on."""

    def __init__(self) -> None:
        self.rows = 0


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> RowCount:
    count = RowCount()
    execute, query = Transaction.execute, Database.query

    def counting_execute(self: Transaction, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        found = execute(self, sql, params)
        count.rows += len(found)
        return found

    def counting_query(self: Database, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        found = query(self, sql, params)
        count.rows += len(found)
        return found

    monkeypatch.setattr(Transaction, "execute", counting_execute)
    monkeypatch.setattr(Database, "query", counting_query)
    return count


def grow(catalog: SqlCatalog, shares: range, recipients: range, granted: range) -> None:
    """Shares ``s0000``... with a table each; recipients ``r00000``... with a token each,
    each granted one of the shares of ``granted`` (its number modulo their count)."""
    with catalog.batch():
        for i in shares:
            catalog.create_share(f"s{i:04}")
            catalog.add_table(f"s{i:04}", "d", "t", TableSpec("/nowhere/t"))
        for i in recipients:
            catalog.create_recipient(f"r{i:05}")
            catalog.grant(f"s{granted[i % len(granted)]:04}", f"r{i:05}")


@pytest.fixture
def catalog(tmp_path: Path) -> Iterator[tuple[SqlCatalog, Any]]:
    url = f"sqlite:///{tmp_path}/catalog.db"
    catalog = SqlCatalog(url)
    config = parse_config(
        {"catalog": url, "signingKey": "page-reads", "admin": {"port": 1, "tokens": [ADMIN_TOKEN]}},
        {},
    )
    yield catalog, create_admin_app(config)
    catalog.database.close()


def fetched(app: Any, paths: Sequence[str]) -> list[httpx.Response]:
    async def run() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=True)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            await client.get("/console/login")
            csrf = client.cookies["deltaport_login_csrf"]
            signed = await client.post("/console/login", data={"csrf": csrf, "token": ADMIN_TOKEN})
            assert signed.status_code == 303
            return [await client.get(path) for path in paths]

    return asyncio.run(run())


def rows_read(app: Any, counted: RowCount, path: str) -> int:
    fetched(app, [path])  # signing in and a first request, not counted
    before = counted.rows
    (answer,) = fetched(app, [path])
    assert answer.status_code == 200, (path, answer.text)
    return counted.rows - before


def test_no_page_reads_more_rows_when_the_catalog_grows_tenfold(
    catalog: tuple[SqlCatalog, Any], counted: RowCount, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ten times the shares and recipients, none of them on the pages asked for (the
    shares are created later, the recipients' names sort later, each granted a new share)."""
    monkeypatch.setattr(recipient_pages, "GRANTABLE_SHOWN", 20)
    store, app = catalog
    grow(store, range(0, 250), range(0, 250), range(0, 10))
    small = {path: rows_read(app, counted, path) for path in PAGES}
    grow(store, range(250, 2500), range(250, 2500), range(250, 2500))
    large = {path: rows_read(app, counted, path) for path in PAGES}
    grew = {path: (small[path], large[path]) for path in PAGES if large[path] > small[path]}
    assert not grew, f"rows read (before, after growing tenfold): {grew}"


def listed(app: Any, base: str, size: int, total: int) -> list[tuple[str, ...]]:
    """Every row of every page of ``base`` (a link and its numbers), in page order."""
    offsets = range(0, total, size)
    answers = fetched(app, [f"{base}?offset={offset}" for offset in offsets])
    found: list[tuple[str, ...]] = []
    for answer in answers:
        rows = re.findall(r"<tr>\s*<td><a href=\"([^\"]+)\">.*?</tr>", answer.text, re.DOTALL)
        numbers = re.findall(
            r'<td class="num">(\d+)</td>\s*<td class="num">(\d+)</td>', answer.text
        )
        assert len(rows) == len(numbers)
        found += [(row, *nums) for row, nums in zip(rows, numbers, strict=True)]
    return found


def test_the_pages_of_shares_and_recipients_list_each_once_in_order(
    catalog: tuple[SqlCatalog, Any],
) -> None:
    store, app = catalog
    grow(store, range(0, 250), range(0, 230), range(0, 10))
    store.create_recipient(
        "r00007-oauth", RecipientSpec(authentication_type="OAUTH_CLIENT_CREDENTIALS")
    )
    store.revoke("r00003")
    store.rotate("r00004", RotationSpec(timedelta(hours=1)))
    store.rotate("r00005", RotationSpec(timedelta(0)))
    shares = listed(app, "/console/shares", share_pages.PAGE_SIZE, 250)
    assert [s[0] for s in shares] == [f"/console/shares/s{i:04}" for i in range(250)]
    # a table each; the first ten shares granted to 23 recipients each (230 modulo 10)
    assert [s[1:] for s in shares] == [("1", "23" if i < 10 else "0") for i in range(250)]
    recipients = listed(app, "/console/recipients", recipient_pages.PAGE_SIZE, 231)
    names = [f"r{i:05}" for i in range(230)] + ["r00007-oauth"]
    assert [r[0] for r in recipients] == [f"/console/recipients/{n}" for n in sorted(names)]
    live = {r[0].rsplit("/", 1)[1]: r[1:] for r in recipients}
    assert live["r00001"] == ("1", "1")  # a share, a token
    assert live["r00003"] == ("1", "0")  # revoked
    assert live["r00004"] == ("1", "2")  # rotated: the old token lasts an hour more
    assert live["r00005"] == ("1", "1")  # rotated: the old token ended
    assert live["r00007-oauth"] == ("0", "1")  # an OAuth client


def test_the_tables_list_reads_the_tables_again_after_a_change_not_the_recipients(
    catalog: tuple[SqlCatalog, Any], counted: RowCount
) -> None:
    store, app = catalog
    grow(store, range(0, 20), range(0, 20), range(0, 10))

    def after_adding(recipients: range) -> int:
        grow(store, range(0), recipients, range(0, 10))  # a change: the list is read again
        before = counted.rows
        (answer,) = fetched(app, ["/console/tables"])
        assert answer.status_code == 200 and "s0019" in answer.text
        return counted.rows - before

    assert after_adding(range(20, 21)) == after_adding(range(21, 2000))


def test_the_pages_of_tables_list_each_once_in_order(catalog: tuple[SqlCatalog, Any]) -> None:
    store, app = catalog
    grow(store, range(0, 250), range(0), range(0))
    with store.batch():
        for i in range(0, 250, 50):  # a second table in a few schemas, a second schema
            store.add_table(f"s{i:04}", "d", "u", TableSpec("/nowhere/u"))
            store.add_table(f"s{i:04}", "e", "t", TableSpec("/nowhere/t"))
    total = 250 + 2 * 5
    answers = fetched(app, [f"/console/tables?offset={o}" for o in range(0, 300, 100)])
    shown = [
        name
        for answer in answers
        for name in re.findall(r'href="/console/tables/([^"]+)"', answer.text)
    ]
    # by schema, in the order each schema's first table was added
    expected = [f"s{i:04}.d.{t}" for i in range(250) for t in ("tu" if i % 50 == 0 else "t")]
    expected += [f"s{i:04}.e.t" for i in range(0, 250, 50)]
    assert len(expected) == total
    assert shown == expected
    assert f"1–{table_pages.TABLES_PAGE} of {total}" in answers[0].text
    assert answers[2].text.count('href="/console/tables?offset=') == 1  # back, and no next
