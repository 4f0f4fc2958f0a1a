"""One behaviour suite for both implementations of the ``Catalog`` protocol: the catalog
database itself (``SqlCatalog`` on SQLite) and a running server's admin API
(``RemoteCatalog`` against a real admin listener). Each case runs against both; names are
unique per case, since the server's catalog is shared by the module's cases."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from admin_support import ADMIN_TOKEN, CatalogAdminServer, start_empty_catalog_server
from deltaport.catalog.interface import Catalog
from deltaport.catalog.remote import RemoteCatalog
from deltaport.catalog.rows import (
    CatalogConflictError,
    CatalogError,
    CatalogNotFoundError,
    Details,
    RecipientChange,
    RecipientRow,
    RecipientSpec,
    RotationSpec,
    SchemaDetails,
    TableSpec,
)
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.catalog.tokens import OAUTH
from deltaport.protocol.names import name_key
from sharing_server import stop_server

ENDPOINT = "https://sharing.example.com/delta-sharing/"
_names = itertools.count()


@pytest.fixture(scope="module")
def location(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("protocol-table") / "t"
    table = pa.table({"id": [1, 2], "region": ["eu", "us"]})
    write_deltalake(str(path), table, partition_by=["region"])
    return str(path)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CatalogAdminServer]:
    running = start_empty_catalog_server(tmp_path_factory.mktemp("protocol-server"))
    yield running
    stop_server(running.running.sharing)


@pytest.fixture(params=["sql", "remote"])
def catalog(request: pytest.FixtureRequest, tmp_path: Path) -> Catalog:
    if request.param == "sql":
        return SqlCatalog(f"sqlite:///{tmp_path}/catalog.db")
    server: CatalogAdminServer = request.getfixturevalue("server")
    return RemoteCatalog(server.running.admin, ADMIN_TOKEN)


def _unique(what: str) -> str:
    return f"{what}{next(_names)}"


def _recipient(catalog: Catalog, name: str) -> RecipientRow:
    return catalog.contents().recipients[name_key(name)]


def test_a_share_is_created_listed_and_dropped(catalog: Catalog) -> None:
    name = _unique("Sales")
    made = catalog.create_share(name, "the sales", Details.of("Sales data", {"team": "a"}))
    assert (made.name, made.comment, made.display_name, made.properties) == (
        name,
        "the sales",
        "Sales data",
        (("team", "a"),),
    )
    (listed,) = [s for s in catalog.contents().shares if s.name == name]
    assert (listed.id, listed.comment, listed.properties) == (
        made.id,
        "the sales",
        (("team", "a"),),
    )
    with pytest.raises(CatalogConflictError):
        catalog.create_share(name.lower())
    catalog.set_share_comment(name, "changed")
    assert [s.comment for s in catalog.contents().shares if s.name == name] == ["changed"]
    catalog.drop_share(name)
    assert name not in [s.name for s in catalog.contents().shares]
    with pytest.raises(CatalogNotFoundError):
        catalog.drop_share(name)


def test_a_table_is_shared_as_its_spec_says(catalog: Catalog, location: str) -> None:
    share = _unique("tables")
    catalog.create_share(share)
    spec = TableSpec(
        location,
        history_shared=True,
        start_version=0,
        partition_filter="region = 'eu'",
        comment="a table",
        details=Details.of("The table", {"k": "v"}),
    )
    row = catalog.add_table(share, "sc", "t", spec)
    assert (row.share, row.schema, row.name, row.spec) == (share, "sc", "t", spec)
    assert row.id
    (listed,) = [t for t in catalog.contents().tables if t.share == share]
    assert listed == row
    with pytest.raises(CatalogConflictError):
        catalog.add_table(share, "SC", "T", spec)
    with pytest.raises(CatalogNotFoundError):
        catalog.add_table(_unique("missing"), "sc", "t", spec)
    with pytest.raises(CatalogError, match="cannot be shared"):
        catalog.add_table(share, "sc", "u", TableSpec(location, start_version=-1))
    catalog.remove_table(share, "sc", "t")
    assert [t for t in catalog.contents().tables if t.share == share] == []
    with pytest.raises(CatalogNotFoundError):
        catalog.remove_table(share, "sc", "t")


def test_what_recipients_see_of_a_schema(catalog: Catalog, location: str) -> None:
    share = _unique("schemas")
    catalog.create_share(share)
    with pytest.raises(CatalogNotFoundError):
        catalog.set_schema_details(share, "sc", SchemaDetails(comment="no tables yet"))
    catalog.add_table(share, "sc", "t", TableSpec(location))
    row = catalog.set_schema_details(
        share, "sc", SchemaDetails(display_name="Schema", properties={"a": "1"})
    )
    assert (row.comment, row.display_name, row.properties) == (None, "Schema", (("a", "1"),))
    row = catalog.set_schema_details(share, "sc", SchemaDetails(comment="kept the rest"))
    assert (row.comment, row.display_name, row.properties) == (
        "kept the rest",
        "Schema",
        (("a", "1"),),
    )


def test_a_recipient_with_a_token_granted_a_share(catalog: Catalog) -> None:
    share, name = _unique("granted"), _unique("acme")
    catalog.create_share(share)
    before = time.time() * 1000
    issued = catalog.create_recipient(
        name,
        RecipientSpec(
            properties={"region": "eu"},
            token_lifetime=timedelta(days=1),
            endpoint=ENDPOINT,
            ip_access_list=["10.0.0.0/8"],
        ),
    )
    assert (issued.recipient, issued.endpoint, issued.client_id) == (name, ENDPOINT, None)
    assert issued.token and issued.expires_at is not None
    assert before + 86_400_000 - 60_000 < issued.expires_at < time.time() * 1000 + 86_400_001
    with pytest.raises(CatalogConflictError):
        catalog.create_recipient(name.upper())
    catalog.grant(share, name)
    catalog.grant(share, name)  # granted already: no change
    found = _recipient(catalog, name)
    assert (found.properties, found.shares, found.ip_access_list) == (
        {"region": "eu"},
        (name_key(share),),
        ("10.0.0.0/8",),
    )
    assert found.token_lifetime == timedelta(days=1)
    catalog.revoke_grant(share, name)
    assert _recipient(catalog, name).shares == ()
    with pytest.raises(CatalogNotFoundError):
        catalog.grant(share, _unique("nobody"))


def test_an_oauth_recipient_gets_a_client(catalog: Catalog) -> None:
    name = _unique("machine")
    issued = catalog.create_recipient(
        name, RecipientSpec(endpoint=ENDPOINT, authentication_type=OAUTH)
    )
    assert issued.client_id and issued.token
    contents = catalog.contents()
    assert contents.recipients[name_key(name)].authentication_type == OAUTH
    assert contents.clients[issued.client_id].token.recipient_key == name_key(name)


def test_a_recipient_with_an_activation_link(catalog: Catalog) -> None:
    name = _unique("linked")
    link = catalog.create_recipient_with_link(
        name, RecipientSpec(properties={"a": "1"}, endpoint=ENDPOINT)
    )
    assert link.recipient == name
    assert (
        link.url
        == f"https://sharing.example.com/api/2.1/unity-catalog/public/data_sharing_activation/{link.token}"
    )
    assert link.expires_at > time.time() * 1000
    found = _recipient(catalog, name)
    assert found.properties == {"a": "1"}
    assert [
        t for t in catalog.contents().tokens.values() if t.recipient_key == name_key(name)
    ] == []


def test_a_recipient_changed_rotated_revoked_and_dropped(catalog: Catalog) -> None:
    name = _unique("changing")
    first = catalog.create_recipient(name, RecipientSpec(properties={"a": "1"}, endpoint=ENDPOINT))
    catalog.update_recipient(name, RecipientChange(properties={"b": "2"}))
    assert _recipient(catalog, name).properties == {"b": "2"}
    stored = catalog.set_ip_access_list(name, ["2001:DB8::/32", "192.0.2.7"])
    assert stored == ("2001:db8::/32", "192.0.2.7")
    assert _recipient(catalog, name).ip_access_list == stored
    with pytest.raises(CatalogError, match="IP access list"):
        catalog.set_ip_access_list(name, ["10.1.2.3/8"])
    second = catalog.rotate(name, RotationSpec(timedelta(hours=1), timedelta(days=2)))
    assert second.token != first.token and second.endpoint == ENDPOINT
    tokens = [t for t in catalog.contents().tokens.values() if t.recipient_key == name_key(name)]
    assert len(tokens) == 2 and all(t.expires_at is not None for t in tokens)
    catalog.revoke(name)
    tokens = [t for t in catalog.contents().tokens.values() if t.recipient_key == name_key(name)]
    assert len(tokens) == 2 and all(t.revoked_at is not None for t in tokens)
    catalog.drop_recipient(name)
    assert name_key(name) not in catalog.contents().recipients
    for change in (
        lambda: catalog.revoke(name),
        lambda: catalog.update_recipient(name, RecipientChange(properties={})),
        lambda: catalog.rotate(name, RotationSpec(timedelta(0))),
        lambda: catalog.drop_recipient(name),
    ):
        with pytest.raises(CatalogNotFoundError):
            change()


def test_what_only_the_database_changes(catalog: Catalog, location: str) -> None:
    """Changing a shared table and a rotation answered with a link have no admin API
    route: through a server they are refused before anything changes."""
    share, name = _unique("updated"), _unique("relinked")
    catalog.create_share(share)
    row = catalog.add_table(share, "sc", "t", TableSpec(location))
    catalog.create_recipient_with_link(name, RecipientSpec(endpoint=ENDPOINT))
    changed = TableSpec(location, history_shared=True, comment="now with history")
    if isinstance(catalog, RemoteCatalog):
        with pytest.raises(CatalogError, match="not through --server"):
            catalog.update_table(share, "sc", "t", changed)
        with pytest.raises(CatalogError, match="not through --server"):
            catalog.rotate_with_link(name, timedelta(0), default_endpoint=ENDPOINT)
        assert [t for t in catalog.contents().tables if t.share == share] == [row]
        return
    catalog.update_table(share, "sc", "t", changed)
    (listed,) = [t for t in catalog.contents().tables if t.share == share]
    assert (listed.id, listed.spec) == (row.id, changed)
    with pytest.raises(CatalogError, match="do not change"):
        catalog.update_table(share, "sc", "t", TableSpec("/elsewhere"))
    link = catalog.rotate_with_link(name, timedelta(0), default_endpoint=ENDPOINT)
    assert link.recipient == name and link.url.endswith(link.token)
