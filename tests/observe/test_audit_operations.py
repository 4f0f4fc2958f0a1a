"""The table of audited routes: both listeners of a catalog server look every audited
route's handler up in it while they are built, so a route it does not name stops the
server from starting (with auditing on or off), and no line of it names a route that no
longer exists."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from deltaport.catalog.sql_store import SqlCatalog
from deltaport.config.loading import parse_config
from deltaport.config.model import ServerConfig
from deltaport.listeners.admin_app import create_admin_app
from deltaport.listeners.iceberg_mount import mount_iceberg
from deltaport.observe import audit_operations
from deltaport.observe.audit_operations import OPERATIONS, UnnamedRouteError, operation_of
from deltaport.server import create_app


@pytest.fixture
def config(tmp_path: Path) -> ServerConfig:
    url = f"sqlite:///{tmp_path}/catalog.db"
    SqlCatalog(url).database.close()
    settings = {
        "catalog": url,
        "signingKey": "audit-operations-key",
        "iceberg": {"metadataDirectory": str(tmp_path / "iceberg")},
        "admin": {"port": 9999, "tokens": ["an-admin-token-of-some-length"]},
    }
    return parse_config(settings, {})


def _build_both(config: ServerConfig) -> None:
    app = create_app(config)
    mount_iceberg(app, config, None)  # the Iceberg catalog, on the sharing listener
    app.state.catalog.live.close()
    create_admin_app(config)


class _Looked(dict[str, str]):
    """The table, noting each handler looked up in it."""

    def __init__(self, table: dict[str, str]) -> None:
        super().__init__(table)
        self.looked: set[str] = set()

    def __getitem__(self, key: str) -> str:
        self.looked.add(key)
        return super().__getitem__(key)


@pytest.fixture
def looked(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Looked]:
    table = _Looked(OPERATIONS)
    monkeypatch.setattr(audit_operations, "OPERATIONS", table)
    yield table


def test_every_line_names_a_route_of_a_catalog_server(
    config: ServerConfig, looked: _Looked
) -> None:
    _build_both(config)
    assert looked.looked == set(OPERATIONS)


@pytest.mark.parametrize(
    "handler", ["TokenEndpoint.answer", "Activation.retrieve", "_Api.query_table"]
)
def test_the_sharing_listener_refuses_to_start_with_an_unnamed_route(
    config: ServerConfig, looked: _Looked, handler: str
) -> None:
    del looked[handler]
    with pytest.raises(UnnamedRouteError, match=re.escape(f"{handler} has no audit operation")):
        create_app(config)


@pytest.mark.parametrize(
    "handler", ["SharesApi.create", "RecipientsApi.share_permissions", "CatalogApi.grant"]
)
def test_the_admin_listener_refuses_to_start_with_an_unnamed_route(
    config: ServerConfig, looked: _Looked, handler: str
) -> None:
    del looked[handler]
    with pytest.raises(UnnamedRouteError, match=re.escape(f"{handler} has no audit operation")):
        create_admin_app(config)  # without an audit log: the names are checked all the same


def test_a_handler_is_named_by_its_qualified_name() -> None:
    async def list_shares() -> None: ...

    list_shares.__qualname__ = "_Api.list_shares"
    assert operation_of(list_shares) == "deltaSharingListShares"
    with pytest.raises(UnnamedRouteError, match=re.escape("audit_operations.OPERATIONS")):
        operation_of(test_a_handler_is_named_by_its_qualified_name)
