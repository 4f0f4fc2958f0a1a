"""The catalog store and its live view, the same suite on SQLite and on PostgreSQL."""

from __future__ import annotations

import sqlite3
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from deltaport.catalog.database.connection import Database
from deltaport.catalog.database.migrations import MIGRATIONS, SCHEMA_VERSION, CatalogSchemaError
from deltaport.catalog.live.live_catalog import LiveCatalog
from deltaport.catalog.model import Recipient, TableAccess
from deltaport.catalog.rows import CatalogError, RecipientSpec, RotationSpec, TableSpec
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.catalog.tokens import credential_id
from deltaport.protocol.errors import (
    ResourceNotFoundError,
    TemporarilyUnavailableError,
    UnauthenticatedError,
)
from postgres import postgres_server, postgres_url  # noqa: F401
from waiting import wait_until


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/catalog.db"
    return str(request.getfixturevalue("postgres_url"))


def _live(url: str) -> LiveCatalog:
    """A live view that reads the database when told to (``refresh()``), not by itself."""
    return LiveCatalog(SqlCatalog(url), lambda location: {})


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
        store.add_table(share, "s", "t", TableSpec(f"/data/{share}"))
    acme = store.create_recipient("acme", RecipientSpec(properties={"country": "FR"}))
    store.grant("sales", "acme")
    live = _live(url)
    recipient = live.authenticate(_bearer(acme.token))
    assert recipient == Recipient(
        "acme", frozenset({"sales"}), {"country": "FR"}, credential_id(store.hash_token(acme.token))
    )
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
    now = [time.time()]  # before the token is issued: it expires 1 s after this at the least
    short = store.create_recipient("short", RecipientSpec(token_lifetime=timedelta(seconds=1)))
    kept = store.create_recipient("kept")
    live = LiveCatalog(store, lambda location: {}, poll_seconds=0, wall_clock=lambda: now[0])
    assert live.authenticate(_bearer(short.token)).name == "short"
    now[0] += 60  # well past the expiry, however long issuing took
    with pytest.raises(UnauthenticatedError, match="expired"):
        live.authenticate(_bearer(short.token))
    store.revoke("kept")
    live.refresh()
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
    second = store.rotate("acme", RotationSpec(timedelta(hours=1)))
    live = _live(url)
    assert live.authenticate(_bearer(first.token)).name == "acme"
    assert live.authenticate(_bearer(second.token)).name == "acme"
    third = store.rotate("acme", RotationSpec(timedelta(0)))
    live.refresh()
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
    live.start()
    try:
        _follow_changes(url, live, acme.token)
    finally:
        live.close()


def _follow_changes(url: str, live: LiveCatalog, token: str) -> None:
    recipient = live.authenticate(_bearer(token))
    assert live.view().shares(recipient) == []
    SqlCatalog(url).grant("sales", "acme")  # another process
    wait_until(lambda: live.view().shares(live.authenticate(_bearer(token))), 5, "the grant", 0.05)
    SqlCatalog(url).revoke("acme")

    def refused() -> bool:
        try:
            live.authenticate(_bearer(token))
        except UnauthenticatedError:
            return True
        return False

    wait_until(refused, 5, "the revoke", 0.05)


def test_names_and_errors(url: str) -> None:
    store = SqlCatalog(url)
    store.create_share("Sales")
    with pytest.raises(CatalogError, match="exists already"):
        store.create_share("sales")  # names are case-insensitive
    with pytest.raises(CatalogError, match="no share"):
        store.add_table("nope", "s", "t", TableSpec("/x"))
    with pytest.raises(CatalogError, match="no recipient"):
        store.grant("Sales", "nobody")
    with pytest.raises(CatalogError):
        store.create_recipient("bad/name")
    store.add_table("Sales", "s", "t", TableSpec("/x"))
    with pytest.raises(CatalogError, match="exists already"):
        store.add_table("sales", "S", "T", TableSpec("/y"))
    store.drop_share("sales")
    assert store.contents().tables == ()


def test_access_modes_and_auxiliary_locations_are_kept(url: str) -> None:
    store = SqlCatalog(url)
    store.create_share("sales")
    store.add_table(
        "sales",
        "s",
        "lake",
        TableSpec(
            "s3://bucket/tables/lake/",
            history_shared=True,
            access_modes=("url", "dir"),
            auxiliary_locations=("s3://bucket/aux/lake/", "gs://other/lake"),
        ),
    )
    store.add_table("sales", "s", "local", TableSpec("/data/local"))
    store.add_table("sales", "s", "cloud", TableSpec("s3://bucket/tables/cloud"))
    rows = {t.name: t for t in SqlCatalog(url).contents().tables}
    assert rows["lake"].access_modes == ("url", "dir")
    assert rows["lake"].auxiliary_locations == ("s3://bucket/aux/lake/", "gs://other/lake")
    assert rows["local"].access_modes == ("url",) and rows["local"].auxiliary_locations == ()
    view = _live(url).view()
    everyone = Recipient("all")
    assert view.table(everyone, "sales", "s", "lake").access == TableAccess(
        ("url", "dir"), "s3://bucket/tables/lake", ("s3://bucket/aux/lake", "gs://other/lake")
    )
    # the location is shown for cloud tables only, as for YAML tables
    assert view.table(everyone, "sales", "s", "local").access == TableAccess(("url",), None, ())
    cloud = view.table(everyone, "sales", "s", "cloud").access
    assert cloud == TableAccess(("url",), "s3://bucket/tables/cloud", ())


@pytest.mark.parametrize(
    ("location", "extra", "message"),
    [
        ("s3://b/t", {"access_modes": []}, "accessModes: must name at least one"),
        ("s3://b/t", {"access_modes": ["url", "ftp"]}, "accessModes: 'ftp' is not an access"),
        ("s3://b/t", {"access_modes": ["dir", "dir"]}, "accessModes: a mode is listed twice"),
        ("/data/t", {}, "location: 'dir' cannot be offered for a table on local disk"),
        (
            "s3://b/t",
            {"auxiliary_locations": ["/data/aux"]},
            "auxiliaryLocations[0]: 'dir' cannot be offered for a table on local disk",
        ),
        ("s3://b/t", {"auxiliary_locations": ["ftp://x/y"]}, "auxiliaryLocations[0]: "),
        ("s3://b/t", {"history_shared": False}, "accessModes: 'dir' gives recipients"),
        ("s3://b/t", {"start_version": 2}, "accessModes: 'dir' gives recipients"),
        (
            "s3://b/t",
            {"partition_filter": "region = CURRENT_RECIPIENT('region')"},
            "accessModes: 'dir' cannot be offered on a table with a partitionFilter",
        ),
    ],
)
def test_access_modes_are_checked_and_nothing_is_written(
    url: str, location: str, extra: dict[str, Any], message: str
) -> None:
    store = SqlCatalog(url)
    store.create_share("sales")
    generation = store.generation()
    arguments: dict[str, Any] = {"history_shared": True, "access_modes": ["dir"], **extra}
    with pytest.raises(CatalogError) as info:
        store.add_table("sales", "s", "t", TableSpec(location, **arguments))
    assert str(info.value).startswith(f"table sales.s.t cannot be shared: {message}")
    assert store.contents().tables == ()
    assert store.generation() == generation


def test_a_version_1_database_is_migrated_and_its_tables_read_as_url(url: str) -> None:
    """A catalog written by a deltaport of schema version 1 (before access modes)."""
    database = Database(url, create=True)
    with database.transaction() as tx:
        for statement in MIGRATIONS[0]:
            tx.execute(statement)
        for key, value in (("schema_version", "1"), ("generation", "4"), ("token_key", "ab" * 32)):
            tx.execute("INSERT INTO deltaport_meta (key, value) VALUES (?, ?)", (key, value))
        tx.execute(
            "INSERT INTO shares (name_key, name, id, comment, created_at) "
            "VALUES ('sales', 'sales', 'share-id', NULL, 1)"
        )
        tx.execute(
            "INSERT INTO shared_tables (name_key, share_key, schema_name, name, location, id, "
            "history_shared, start_version, partition_filter, ordinal) "
            "VALUES ('sales.s.old', 'sales', 's', 'old', 's3://b/old', 'table-id', 1, 0, NULL, 1)"
        )
    database.close()
    store = SqlCatalog(url)
    version = store.database.query("SELECT value FROM deltaport_meta WHERE key='schema_version'")
    assert int(version[0][0]) == SCHEMA_VERSION
    (old,) = store.contents().tables
    assert (old.name, old.location, old.history_shared) == ("old", "s3://b/old", True)
    assert old.access_modes == ("url",) and old.auxiliary_locations == ()
    table = _live(url).view().table(Recipient("all"), "sales", "s", "old")
    assert table.access == TableAccess(("url",), "s3://b/old", ())
    store.add_table(
        "sales", "s", "new", TableSpec("s3://b/new", history_shared=True, access_modes=("dir",))
    )
    modes = {t.name: t.access_modes for t in SqlCatalog(url).contents().tables}
    assert modes == {"old": ("url",), "new": ("dir",)}


def test_a_version_2_database_keeps_each_recipients_token_lifetime(url: str) -> None:
    """Recipients of a catalog written before lifetimes were kept: a rotation gives the new
    token the lifetime of the recipient's newest one."""
    database = Database(url, create=True)
    day = 86_400_000
    with database.transaction() as tx:
        for statement in (*MIGRATIONS[0], *MIGRATIONS[1]):
            tx.execute(statement)
        for key, value in (("schema_version", "2"), ("generation", "4"), ("token_key", "ab" * 32)):
            tx.execute("INSERT INTO deltaport_meta (key, value) VALUES (?, ?)", (key, value))
        for name in ("acme", "open"):
            tx.execute(
                "INSERT INTO recipients (name_key, name, properties, created_at) "
                "VALUES (?, ?, '{}', 1)",
                (name, name),
            )
        for token, name, created, expires in (
            ("h1", "acme", 1_000, 1_000 + 30 * day),
            ("h2", "acme", 5_000, 5_001 + 90 * day),  # the newest: 90 days (and a millisecond)
            ("h3", "open", 1_000, None),
        ):
            tx.execute(
                "INSERT INTO tokens (hash, recipient_key, created_at, expires_at) VALUES (?,?,?,?)",
                (token, name, created, expires),
            )
    database.close()
    store = SqlCatalog(url)
    recipients = store.contents().recipients
    assert recipients["acme"].token_lifetime == timedelta(days=90)
    assert recipients["open"].token_lifetime is None
    assert recipients["acme"].endpoint is None
    before = int(time.time() * 1000)
    rotated = store.rotate(
        "acme", RotationSpec(timedelta(0)), default_endpoint="https://x.example.com/ds"
    )
    assert rotated.expires_at is not None
    assert before + 90 * day <= rotated.expires_at <= time.time() * 1000 + 90 * day
    assert rotated.endpoint == "https://x.example.com/ds"
    assert store.rotate("open", RotationSpec(timedelta(0))).expires_at is None
    assert SqlCatalog(url).contents().recipients["acme"].endpoint == "https://x.example.com/ds"


def test_a_reload_reuses_what_did_not_change_and_rebuilds_what_did(url: str) -> None:
    store = SqlCatalog(url)
    store.create_share("sales")
    store.add_table("sales", "s", "kept", TableSpec("/kept"))
    store.add_table("sales", "s", "moved", TableSpec("/before"))
    one = store.create_recipient("one")
    two = store.create_recipient("two")
    store.grant("sales", "one")
    live = _live(url)
    everyone = Recipient("all")
    kept = live.view().table(everyone, "sales", "s", "kept")
    moved = live.view().table(everyone, "sales", "s", "moved")
    recipient_one = live.authenticate(_bearer(one.token))
    store.remove_table("sales", "s", "moved")
    store.add_table("sales", "s", "moved", TableSpec("/after"))
    store.grant("sales", "two")
    live.refresh()
    view = live.view()
    assert view.table(everyone, "sales", "s", "kept") is kept
    again = view.table(everyone, "sales", "s", "moved")
    assert again.id != moved.id and again.location.uri.endswith("/after")
    assert live.authenticate(_bearer(one.token)) == recipient_one
    assert live.authenticate(_bearer(two.token)).shares == {"sales"}
    assert [s.name for s in view.shares(live.authenticate(_bearer(two.token)))] == ["sales"]


def test_a_view_older_than_its_bound_is_refused_until_read_again(url: str) -> None:
    store = SqlCatalog(url)
    acme = store.create_recipient("acme")
    now = [1000.0]
    live = LiveCatalog(
        SqlCatalog(url), lambda location: {}, max_stale_seconds=30, clock=lambda: now[0]
    )
    now[0] += 30
    assert live.authenticate(_bearer(acme.token)).name == "acme"  # at the bound: still served
    now[0] += 0.001
    with pytest.raises(TemporarilyUnavailableError):
        live.authenticate(_bearer(acme.token))
    with pytest.raises(TemporarilyUnavailableError):
        live.view()
    with pytest.raises(TemporarilyUnavailableError):
        live.may_read("acme", "credential", "sales.s.t")
    live.refresh()  # the database answers again
    assert live.authenticate(_bearer(acme.token)).name == "acme"
