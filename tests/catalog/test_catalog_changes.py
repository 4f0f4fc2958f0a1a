"""The change log and the incremental refresh of the live catalog, on SQLite and PostgreSQL:
a view kept up to date change by change equals one loaded whole, after any sequence of
writes; revocations take effect on every replica through it; the log stays bounded and a
view the log cannot serve loads the catalog whole."""

from __future__ import annotations

import time
from contextlib import suppress
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deltaport.catalog.database import change_log
from deltaport.catalog.live.live_catalog import LiveCatalog
from deltaport.catalog.rows import (
    CatalogError,
    RecipientChange,
    RecipientSpec,
    RotationSpec,
    TableSpec,
)
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.catalog.tokens import OAUTH
from deltaport.protocol.errors import ResourceNotFoundError, UnauthenticatedError
from postgres import postgres_server, postgres_url  # noqa: F401

SHARES = ("s1", "S2", "s3")
RECIPIENTS = ("r1", "R2", "r3")
TABLES = ("t1", "t2", "T3")


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/catalog.db"
    return str(request.getfixturevalue("postgres_url"))


def _live(url: str) -> LiveCatalog:
    """A view that reads the database when told to (``refresh()``), on its own connection."""
    return LiveCatalog(SqlCatalog(url), lambda location: {})


def _state(live: LiveCatalog) -> tuple[Any, ...]:
    """Everything a snapshot answers from, in a form where order counts where it does."""
    snapshot = live._snapshot
    view = snapshot.view
    shares = [
        (
            key,
            share.name,
            share.id,
            share.comment,
            [
                (schema_key, schema.name, list(schema.tables.items()))
                for schema_key, schema in share.schemas.items()
            ],
        )
        for key, share in view._shares.items()
    ]
    return (
        snapshot.generation,
        shares,
        view._order,
        view._tables_by_key,
        snapshot.recipients,
        snapshot.credentials,
        snapshot.clients,
        snapshot.held,
    )


_name = st.sampled_from
_operations = st.one_of(
    st.tuples(st.just("create_share"), _name(SHARES), st.sampled_from([None, "c"])),
    st.tuples(st.just("drop_share"), _name(SHARES)),
    st.tuples(st.just("set_share_comment"), _name(SHARES), st.sampled_from([None, "x"])),
    st.tuples(st.just("add_table"), _name(SHARES), _name(("a", "B")), _name(TABLES)),
    st.tuples(st.just("update_table"), _name(SHARES), _name(("a", "B")), _name(TABLES)),
    st.tuples(st.just("remove_table"), _name(SHARES), _name(("a", "B")), _name(TABLES)),
    st.tuples(st.just("create_recipient"), _name(RECIPIENTS), st.booleans()),
    st.tuples(st.just("create_with_link"), _name(RECIPIENTS)),
    st.tuples(st.just("update_recipient"), _name(RECIPIENTS), _name(("eu", "us"))),
    st.tuples(st.just("drop_recipient"), _name(RECIPIENTS)),
    st.tuples(st.just("grant"), _name(SHARES), _name(RECIPIENTS)),
    st.tuples(st.just("revoke_grant"), _name(SHARES), _name(RECIPIENTS)),
    st.tuples(st.just("rotate"), _name(RECIPIENTS), st.sampled_from([0, 60])),
    st.tuples(st.just("revoke"), _name(RECIPIENTS)),
    st.tuples(st.just("ip_list"), _name(RECIPIENTS), _name(((), ("10.0.0.0/8",)))),
    st.tuples(st.just("batch"), _name(SHARES), _name(RECIPIENTS)),
)


def _apply(store: SqlCatalog, links: list[str], operation: tuple[Any, ...]) -> None:
    """One write; a write the catalog refuses (a name taken or missing) changes nothing."""
    kind, *args = operation
    try:
        if kind == "create_share":
            store.create_share(args[0], args[1])
        elif kind == "drop_share":
            store.drop_share(args[0])
        elif kind == "set_share_comment":
            store.set_share_comment(args[0], args[1])
        elif kind == "add_table":
            store.add_table(args[0], args[1], args[2], TableSpec(f"/data/{args[2]}"))
        elif kind == "update_table":
            changed = TableSpec(
                f"/data/{args[2]}", history_shared=True, start_version=1, comment="changed"
            )
            store.update_table(args[0], args[1], args[2], changed)
        elif kind == "remove_table":
            store.remove_table(args[0], args[1], args[2])
        elif kind == "create_recipient":
            kind_name = OAUTH if args[1] else "TOKEN"
            store.create_recipient(
                args[0], RecipientSpec(properties={"region": "eu"}, authentication_type=kind_name)
            )
        elif kind == "create_with_link":
            link = store.create_recipient_with_link(
                args[0], RecipientSpec(endpoint="https://x.example/ds")
            )
            links.append(link.token)
        elif kind == "update_recipient":
            store.update_recipient(
                args[0], RecipientChange(properties={"region": args[1]}, comment=args[1])
            )
        elif kind == "drop_recipient":
            store.drop_recipient(args[0])
        elif kind == "grant":
            store.grant(args[0], args[1])
        elif kind == "revoke_grant":
            store.revoke_grant(args[0], args[1])
        elif kind == "rotate":
            store.rotate(args[0], RotationSpec(timedelta(seconds=args[1])))
        elif kind == "revoke":
            store.revoke(args[0])
        elif kind == "ip_list":
            store.set_ip_access_list(args[0], list(args[1]))
        elif kind == "batch":
            with store.batch():
                store.create_share(args[0])
                store.grant(args[0], args[1])
    except CatalogError:
        pass
    if links and kind == "create_with_link":
        with suppress(CatalogError):
            store.activate(links.pop(), lambda linked: None)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(batches=st.lists(st.lists(_operations, min_size=1, max_size=6), min_size=1, max_size=4))
def test_a_view_changed_incrementally_equals_one_loaded_whole(
    url: str, batches: list[list[tuple[Any, ...]]]
) -> None:
    store = SqlCatalog(url)
    live = _live(url)
    links: list[str] = []
    for batch in batches:
        for operation in batch:
            _apply(store, links, operation)
        live.refresh()
        assert _state(live) == _state(_live(url))
    assert live.full_loads == 0


def test_a_share_dropped_and_created_again_takes_its_new_place(url: str) -> None:
    """Shares are in the order they were created: one dropped and created again between two
    refreshes is the newest, in a view changed incrementally as in one loaded whole (found
    by the property above, on PostgreSQL, when its starting catalog happened to hold it)."""
    store = SqlCatalog(url)
    for name in ("first", "second"):
        store.create_share(name)
    live = _live(url)
    store.drop_share("first")
    time.sleep(0.002)  # a later creation time, whatever the clock's resolution
    store.create_share("first", "again")
    live.refresh()
    assert list(live._snapshot.view._order) == ["second", "first"]
    assert _state(live) == _state(_live(url))
    assert live.full_loads == 0


def test_a_revoked_token_and_grant_are_refused_on_every_replica(url: str) -> None:
    store = SqlCatalog(url)
    store.create_share("sales")
    store.add_table("sales", "s", "t", TableSpec("/data/t"))
    acme = store.create_recipient("acme").token
    other = store.create_recipient("other").token
    store.grant("sales", "acme")
    store.grant("sales", "other")
    replicas = [_live(url), _live(url)]
    bearer = f"Bearer {acme}"
    for live in replicas:
        recipient = live.authenticate(bearer)
        assert live.view().table(recipient, "sales", "s", "t").name == "t"
        assert live.may_read("acme", recipient.credential, "sales.s.t")
    credential = replicas[0].authenticate(bearer).credential
    store.revoke_grant("sales", "other")
    store.revoke("acme")
    for live in replicas:
        live.refresh()
        with pytest.raises(UnauthenticatedError):
            live.authenticate(bearer)
        assert not live.may_read("acme", credential, "sales.s.t")
        someone = live.authenticate(f"Bearer {other}")
        with pytest.raises(ResourceNotFoundError):
            live.view().table(someone, "sales", "s", "t")
        assert live.view().shares(someone) == []
        assert live.full_loads == 0


def test_a_large_change_or_a_pruned_log_loads_the_catalog_whole(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SqlCatalog(url)
    store.create_share("sales")
    live = _live(url)
    monkeypatch.setattr(change_log, "MAX_ITEMS_PER_CHANGE", 3)
    with store.batch():
        for i in range(4):
            store.add_table("sales", "s", f"t{i}", TableSpec(f"/data/t{i}"))
    assert _logged(store) == 0  # too large a change: not logged item by item
    live.refresh()
    assert live.full_loads == 1
    assert _state(live) == _state(_live(url))
    store.add_table("sales", "s", "small", TableSpec("/data/small"))
    live.refresh()
    assert live.full_loads == 1  # a small change again goes through the log
    assert _state(live) == _state(_live(url))
    monkeypatch.setattr(change_log, "KEEP_GENERATIONS", 3)
    monkeypatch.setattr(change_log, "PRUNE_EVERY", 1)
    behind = _live(url)
    for i in range(5):
        store.set_share_comment("sales", str(i))
    assert _generations(store) == 3  # the log keeps the last three generations only
    behind.refresh()
    assert behind.full_loads == 1
    assert _state(behind) == _state(_live(url))


def _logged(store: SqlCatalog) -> int:
    return int(store.database.query("SELECT COUNT(*) FROM catalog_changes")[0][0])


def _generations(store: SqlCatalog) -> int:
    rows = store.database.query("SELECT COUNT(DISTINCT generation) FROM catalog_changes")
    return int(rows[0][0])


def test_a_failed_change_logs_nothing(url: str) -> None:
    store = SqlCatalog(url)
    store.create_share("sales")
    before = _logged(store), store.generation()
    with pytest.raises(CatalogError), store.batch():
        store.create_share("hr")
        store.create_share("sales")  # taken: the whole batch is undone
    assert (_logged(store), store.generation()) == before
