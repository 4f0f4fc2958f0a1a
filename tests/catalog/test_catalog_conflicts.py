"""Two writers creating the same name, on SQLite and on PostgreSQL: the database's keys
decide, exactly one succeeds, the other gets the catalog's conflict (409 on the admin API),
and nothing of the loser is written."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from admin_support import start_with_admin
from deltaport.catalog.rows import CatalogConflictError, Details, RecipientSpec, TableSpec
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.cli import main as cli
from postgres import postgres_server, postgres_url  # noqa: F401
from sharing_server import stop_server

ADMIN_TOKEN = "conflicts-admin-token-5d2a"


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/catalog.db"
    return str(request.getfixturevalue("postgres_url"))


def _race(
    url: str, first: Callable[[SqlCatalog], object], second: Callable[[SqlCatalog], object]
) -> BaseException | None:
    """``first`` on one catalog, its transaction held open while ``second`` runs on another
    catalog of the same database (it waits for the first's lock); what ``second`` raised."""
    one, two = SqlCatalog(url), SqlCatalog(url)
    started = threading.Event()

    def run_second() -> BaseException | None:
        started.set()
        try:
            second(two)
        except Exception as exc:
            return exc
        return None

    with ThreadPoolExecutor(1) as pool:
        with one.batch():
            first(one)
            later = pool.submit(run_second)
            started.wait(5)
            time.sleep(0.3)  # the second writer is waiting for the first's transaction
        return later.result(timeout=30)


def test_a_share_created_twice_at_once(url: str) -> None:
    raised = _race(
        url,
        lambda c: c.create_share("Sales", "first", Details.of("First", {"k": "1"})),
        lambda c: c.create_share("sales", "second", Details.of("Second", {"k": "2"})),
    )
    assert isinstance(raised, CatalogConflictError)
    assert str(raised) == "share 'sales' exists already"
    (share,) = SqlCatalog(url).contents().shares
    assert (share.name, share.comment, share.display_name, share.properties) == (
        "Sales",
        "first",
        "First",
        (("k", "1"),),
    )


def test_a_recipient_created_twice_at_once(url: str) -> None:
    raised = _race(
        url,
        lambda c: c.create_recipient("acme", RecipientSpec(properties={"region": "eu"})),
        lambda c: c.create_recipient(
            "ACME", RecipientSpec(properties={"region": "us"}, ip_access_list=["10.0.0.0/8"])
        ),
    )
    assert isinstance(raised, CatalogConflictError)
    assert str(raised) == "recipient 'ACME' exists already"
    contents = SqlCatalog(url).contents()
    assert list(contents.recipients) == ["acme"]
    recipient = contents.recipients["acme"]
    assert (recipient.name, recipient.properties, recipient.ip_access_list) == (
        "acme",
        {"region": "eu"},
        (),
    )
    assert len(contents.tokens) == 1  # the loser's token was never written


def test_a_recipient_with_a_link_created_twice_at_once(url: str) -> None:
    def link(c: SqlCatalog) -> object:
        return c.create_recipient_with_link(
            "acme", RecipientSpec(endpoint="https://sharing.example/ds")
        )

    raised = _race(url, link, link)
    assert isinstance(raised, CatalogConflictError)
    catalog = SqlCatalog(url)
    assert list(catalog.contents().recipients) == ["acme"]
    assert list(catalog.unused_links()) == ["acme"]
    (count,) = catalog.database.query("SELECT COUNT(*) FROM activation_links")[0]
    assert count == 1


def test_a_table_added_twice_at_once(url: str, tmp_path: Path) -> None:
    SqlCatalog(url).create_share("s")
    raised = _race(
        url,
        lambda c: c.add_table("s", "sc", "t", TableSpec(str(tmp_path / "a"), comment="a")),
        lambda c: c.add_table("s", "SC", "T", TableSpec(str(tmp_path / "b"), comment="b")),
    )
    assert isinstance(raised, CatalogConflictError)
    assert str(raised) == "table s.SC.T exists already"
    (table,) = SqlCatalog(url).contents().tables
    assert (table.schema, table.name, table.location, table.comment) == (
        "sc",
        "t",
        str(tmp_path / "a"),
        "a",
    )


def test_a_grant_made_twice_at_once_is_one_grant(url: str) -> None:
    catalog = SqlCatalog(url)
    catalog.create_share("s")
    catalog.create_recipient("r")
    raised = _race(url, lambda c: c.grant("s", "r"), lambda c: c.grant("S", "R"))
    assert raised is None  # granting what is granted changes nothing, as it always did
    assert SqlCatalog(url).contents().recipients["r"].shares == ("s",)
    (count,) = catalog.database.query("SELECT COUNT(*) FROM grants")[0]
    assert count == 1


def test_the_admin_api_answers_409_to_the_second_writer(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/catalog.db"
    assert cli(["catalog", "init", "--catalog", url]) == 0
    config = {"catalog": url, "signingKey": "conflicts-signing-key"}
    running = start_with_admin(config, tmp_path / "server", ADMIN_TOKEN)
    try:
        headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        with httpx.Client(base_url=running.admin, headers=headers, timeout=30) as api:
            bodies = [
                ("/api/shares", {"name": "sales"}),
                ("/api/recipients", {"name": "acme", "endpoint": "https://sharing.example/ds"}),
            ]
            for path, body in bodies:
                first, second = api.post(path, json=body), api.post(path, json=body)
                assert first.status_code == 201, first.text
                assert second.status_code == 409, second.text
                assert second.json()["errorCode"] == "RESOURCE_ALREADY_EXISTS"
                assert "exists already" in second.json()["message"]
            # a writer outside the server (a command on the database) took the name first
            SqlCatalog(url).create_share("taken")
            answer = api.post("/api/shares", json={"name": "TAKEN"})
            assert answer.status_code == 409
            assert answer.json() == {
                "errorCode": "RESOURCE_ALREADY_EXISTS",
                "message": "share 'TAKEN' exists already",
            }
    finally:
        stop_server(running.sharing)
