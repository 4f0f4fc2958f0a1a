"""Changes the provider API makes in place (comments, a table's settings, a recipient's
properties), on SQLite and on PostgreSQL: checked before anything is written, kept whole."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from deltaport.catalog.rows import (
    CatalogError,
    CatalogNotFoundError,
    RecipientChange,
    RecipientSpec,
    TableSpec,
)
from deltaport.catalog.sql_store import SqlCatalog
from postgres import postgres_server, postgres_url  # noqa: F401


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> SqlCatalog:
    if request.param == "sqlite":
        return SqlCatalog(f"sqlite:///{tmp_path}/catalog.db")
    return SqlCatalog(str(request.getfixturevalue("postgres_url")))


@pytest.fixture(scope="module")
def location(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("t") / "t"
    write_deltalake(str(path), pa.table({"id": [1], "region": ["eu"]}), partition_by=["region"])
    return str(path)


def test_comments_and_a_table_changed_in_place(store: SqlCatalog, location: str) -> None:
    store.create_share("s", "first")
    store.set_share_comment("s", "second")
    added = store.add_table("s", "sc", "t", TableSpec(location, comment="a table"))
    changed = replace(
        added.spec, history_shared=True, partition_filter="region = 'eu'", comment=None
    )
    store.update_table("s", "sc", "t", changed)
    contents = store.contents()
    assert contents.shares[0].comment == "second"
    (table,) = contents.tables
    assert (table.id, table.location, table.history_shared, table.comment) == (
        added.id,
        location,
        True,
        None,
    )
    assert table.partition_filter == "region = 'eu'"
    generation = store.generation()
    with pytest.raises(CatalogError, match="comment"):
        store.update_table("s", "sc", "t", replace(table.spec, comment="x" * 5000))
    with pytest.raises(CatalogNotFoundError):
        store.update_table("s", "sc", "nope", table.spec)
    assert store.generation() == generation
    assert store.contents().tables == contents.tables


def test_a_recipient_changed_in_place(store: SqlCatalog) -> None:
    store.create_recipient("r", RecipientSpec(properties={"a": "1"}, comment="partner"))
    store.update_recipient("r", RecipientChange(properties={"b": "2"}))
    (recipient,) = store.contents().recipients.values()
    assert (recipient.properties, recipient.comment) == ({"b": "2"}, "partner")
    store.update_recipient("r", RecipientChange(comment=None))
    (recipient,) = store.contents().recipients.values()
    assert (recipient.properties, recipient.comment) == ({"b": "2"}, None)
    with pytest.raises(CatalogNotFoundError):
        store.update_recipient("ghost", RecipientChange(comment="x"))
    with pytest.raises(CatalogError, match="properties"):
        store.update_recipient("r", RecipientChange(properties={"": "empty name"}))


def test_a_batch_that_fails_half_way_changes_nothing(store: SqlCatalog, location: str) -> None:
    store.create_share("s")
    store.create_recipient("r")
    generation = store.generation()
    with pytest.raises(CatalogNotFoundError), store.batch():
        store.set_share_comment("s", "changed")
        store.add_table("s", "sc", "t", TableSpec(location))
        store.grant("s", "ghost")
    assert store.generation() == generation
    contents = store.contents()
    assert (contents.shares[0].comment, contents.tables) == (None, ())
