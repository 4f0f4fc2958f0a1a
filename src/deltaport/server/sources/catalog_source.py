"""Where the server's catalog comes from: the YAML configuration (read-only, one bearer
token for every share) or a database (``catalog:``, ``--catalog`` or ``DELTAPORT_CATALOG``)
with recipients, tokens and grants that change while the server runs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from deltaport.catalog.live.live_catalog import LiveCatalog
from deltaport.catalog.model import CatalogView, Recipient
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.config.model import ConfigError, ServerConfig, TableConfig
from deltaport.config.urls import catalog_url
from deltaport.observe.metrics import forget_recipients
from deltaport.server.files.reader_seal import ReaderSeal
from deltaport.server.sources.bearer_auth import BearerAuth
from deltaport.server.sources.yaml_catalog import yaml_catalog


class CatalogSource(Protocol):
    def view(self) -> CatalogView: ...

    def authenticate(self, authorization: str | None) -> Recipient: ...

    def recipient_count(self) -> int: ...

    def may_read_file(self, table_key: str, query: Mapping[str, str], client: str | None) -> bool:
        """Whether a (correctly signed) local file URL may still be answered; 403 for a
        client outside its recipient's IP access list."""
        ...


class YamlCatalog:
    """The configuration's shares; its bearer token is one recipient granted all of them."""

    def __init__(self, config: ServerConfig) -> None:
        self._view = yaml_catalog(config)
        token = config.authorization.bearer_token if config.authorization else None
        self._token = token
        self._auth = BearerAuth({token: Recipient("default")} if token else {})

    def view(self) -> CatalogView:
        return self._view

    def authenticate(self, authorization: str | None) -> Recipient:
        return self._auth.authenticate(authorization)

    def recipient_count(self) -> int:
        return 1 if self._token else 0

    def may_read_file(self, table_key: str, query: Mapping[str, str], client: str | None) -> bool:
        return True


class DatabaseCatalog:
    """A catalog database's live view; local file URLs answered only for the recipient
    and token they were handed to, while it may still read the table with that token (see
    :mod:`reader_seal`)."""

    def __init__(self, live: LiveCatalog, seal: ReaderSeal) -> None:
        self._live = live
        self._seal = seal

    @property
    def live(self) -> LiveCatalog:
        return self._live

    def view(self) -> CatalogView:
        return self._live.view()

    def authenticate(self, authorization: str | None) -> Recipient:
        return self._live.authenticate(authorization)

    def recipient_count(self) -> int:
        return self._live.recipient_count()

    def may_read_file(self, table_key: str, query: Mapping[str, str], client: str | None) -> bool:
        reader = self._seal.reader(table_key, query)
        if reader is None:
            return False
        if not self._live.may_read(reader.name, reader.credential, table_key):
            return False
        self._live.ip_access(reader.name).admit(client)
        return True


def catalog_source(config: ServerConfig, seal: ReaderSeal, access_key: bytes) -> CatalogSource:
    """The shares and recipients ``config`` names: its own file, or a catalog database
    (whose OAuth access tokens are signed with ``access_key`` mixed with the catalog's)."""
    url = catalog_url(config)
    if url is None:
        return YamlCatalog(config)
    if config.shares or (config.authorization and config.authorization.bearer_token):
        raise ConfigError(
            "catalog: a server on a catalog database takes its shares and recipients from it; "
            "remove shares and authorization from the file (deltaport catalog import "
            "copies them into the database)"
        )

    def options_for(location: str) -> dict[str, str]:
        return config.storage_options_for(TableConfig(name="t", location=location))

    live = LiveCatalog(
        SqlCatalog(url, create=False),
        options_for,
        max_stale_seconds=config.catalog_max_stale_seconds,
        access_key=access_key,
        recipients_removed=forget_recipients,
    )
    live.start()
    return DatabaseCatalog(live, seal)
