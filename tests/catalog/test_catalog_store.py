"""The catalog store and its live view, the same suite on SQLite and on PostgreSQL."""

from __future__ import annotations

import sqlite3
import time
from datetime import timedelta
from pathlib import Path

import pytest

from deltaport.catalog.live import LiveCatalog
from deltaport.catalog.migrations import SCHEMA_VERSION, CatalogSchemaError
from deltaport.catalog.model import Recipient
from deltaport.catalog.sql_store import CatalogError, SqlCatalog
from deltaport.protocol.errors import ResourceNotFoundError, UnauthenticatedError
from postgres import postgres_server, postgres_url  # noqa: F401


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/catalog.db"
    return str(request.getfixturevalue("postgres_url"))


def _live(url: str) -> LiveCatalog:
    return LiveCatalog(SqlCatalog(url), lambda location: {}, poll_seconds=0)


def _bearer(token: str) -> str:
    return f"Bearer {token}"


def test_a_new_database_is_created_and_migrated_once(url: str) -> None:
    first = SqlCatalog(url)
    first.create_share("sales")
    again = SqlCatalog(url)  # a second server start: nothing recreated
    assert [s.name for s in again.contents().shares] == ["sales"]
    version = again.database.query("SELECT value FROM deltaport_meta WHERE key='schema_version'")
    assert int(version[0][0]) == SCHEMA_VERSION


def test_a_newer_or_foreign_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "newer.db"
    SqlCatalog(f"sqlite:///{path}")
    with sqlite3.connect(path) as db:
        db.execute("UPDATE deltaport_meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(CatalogSchemaError, match="newer"):
        SqlCatalog(f"sqlite:///{path}")
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as db:
        db.execute("CREATE TABLE invoices (id INTEGER)")
    with pytest.raises(CatalogSchemaError, match="no deltaport catalog"):
        SqlCatalog(f"sqlite:///{foreign}")


def test_recipients_see_only_granted_shares(url: str) -> None:
    store = SqlCatalog(url)
    for share in ("sales", "hr"):
        store.create_share(share)
        store.add_table(share, "s", "t", f"/data/{share}")
    acme = store.create_recipient("acme", {"country": "FR"})
    store.grant("sales", "acme")
    live = _live(url)
    recipient = live.authenticate(_bearer(acme.token))
    assert recipient == Recipient("acme", frozenset({"sales"}), {"country": "FR"})
    view = live.view()
    assert [s.name for s in view.shares(recipient)] == ["sales"]
    for ask in (
        lambda: view.share(recipient, "hr"),
        lambda: view.schemas(recipient, "hr"),
        lambda: view.table(recipient, "hr", "s", "t"),
    ):
        with pytest.raises(ResourceNotFoundError) as info:
            ask()
        assert "does not exist" in info.value.message  # the same as a share that is not there
    assert view.table(recipient, "sales", "s", "t").scope.startswith("acme")


def test_tokens_are_random_hashed_and_shown_once(url: str) -> None:
    store = SqlCatalog(url)
    issued = store.create_recipient("acme")
    assert issued.token.startswith("dpt_") and len(issued.token) >= 4 + 43  # 256 bits
    other = store.create_recipient("globex")
    assert other.token != issued.token
    stored = store.database.query("SELECT hash FROM tokens")
    assert all(issued.token not in row[0] for row in stored)
    assert {row[0] for row in stored} == {
        store.hash_token(issued.token),
        store.hash_token(other.token),
    }


def test_expired_revoked_and_unknown_tokens(url: str) -> None:
    store = SqlCatalog(url)
    short = store.create_recipient("short", expires_in=timedelta(seconds=1))
    kept = store.create_recipient("kept")
    live = _live(url)
    assert live.authenticate(_bearer(short.token)).name == "short"
    time.sleep(1.1)
    with pytest.raises(UnauthenticatedError, match="expired"):
        live.authenticate(_bearer(short.token))
    store.revoke("kept")
    with pytest.raises(UnauthenticatedError, match="expired or was revoked"):
        live.authenticate(_bearer(kept.token))
    with pytest.raises(UnauthenticatedError) as info:
        live.authenticate(_bearer("dpt_nothing"))
    assert "kept" not in info.value.message and "short" not in info.value.message
    with pytest.raises(UnauthenticatedError, match="missing"):
        live.authenticate(None)


def test_rotation_keeps_the_old_token_until_its_deadline(url: str) -> None:
    store = SqlCatalog(url)
    first = store.create_recipient("acme")
    second = store.rotate("acme", timedelta(hours=1))
    live = _live(url)
    assert live.authenticate(_bearer(first.token)).name == "acme"
    assert live.authenticate(_bearer(second.token)).name == "acme"
    third = store.rotate("acme", timedelta(0))
    with pytest.raises(UnauthenticatedError, match="expired"):
        live.authenticate(_bearer(first.token))
    with pytest.raises(UnauthenticatedError, match="expired"):
        live.authenticate(_bearer(second.token))
    assert live.authenticate(_bearer(third.token)).name == "acme"


def test_changes_reach_a_running_view_within_the_poll(url: str) -> None:
    store = SqlCatalog(url)
    store.create_share("sales")
    acme = store.create_recipient("acme")
    live = LiveCatalog(SqlCatalog(url), lambda location: {}, poll_seconds=0.2)
    recipient = live.authenticate(_bearer(acme.token))
    assert live.view().shares(recipient) == []
    SqlCatalog(url).grant("sales", "acme")  # another process
    deadline = time.monotonic() + 5
    while not live.view().shares(live.authenticate(_bearer(acme.token))):
        assert time.monotonic() < deadline, "the grant did not arrive"
        time.sleep(0.05)
    SqlCatalog(url).revoke("acme")
    deadline = time.monotonic() + 5
    while True:
        try:
            live.authenticate(_bearer(acme.token))
        except UnauthenticatedError:
            break
        assert time.monotonic() < deadline, "the revoke did not arrive"
        time.sleep(0.05)


def test_names_and_errors(url: str) -> None:
    store = SqlCatalog(url)
    store.create_share("Sales")
    with pytest.raises(CatalogError, match="exists already"):
        store.create_share("sales")  # names are case-insensitive
    with pytest.raises(CatalogError, match="no share"):
        store.add_table("nope", "s", "t", "/x")
    with pytest.raises(CatalogError, match="no recipient"):
        store.grant("Sales", "nobody")
    with pytest.raises(CatalogError):
        store.create_recipient("bad/name")
    store.add_table("Sales", "s", "t", "/x")
    with pytest.raises(CatalogError, match="exists already"):
        store.add_table("sales", "S", "T", "/y")
    store.drop_share("sales")
    assert store.contents().tables == ()
