"""The catalog: shares, schemas and tables of the configuration, looked up by name.

Names are case-insensitive. A :class:`Recipient` sees every share unless its ``shares``
set says otherwise, so per-recipient tokens only need a different recipient table.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from deltaport.protocol.credentials import URL
from deltaport.protocol.echo import echo
from deltaport.protocol.errors import ResourceNotFoundError
from deltaport.protocol.names import name_key
from deltaport.server.config import ServerConfig
from deltaport.storage import Location, parse_location


@dataclass(frozen=True)
class Recipient:
    """Who is asking. ``shares`` (name keys) limits what the recipient sees; None: all."""

    name: str
    shares: frozenset[str] | None = None

    def can_see(self, share_name: str) -> bool:
        return self.shares is None or name_key(share_name) in self.shares


@dataclass(frozen=True)
class TableAccess:
    """How recipients may read a table, as list-tables and metadata answers say it.

    ``location`` is the configured location (what a ``dir`` recipient asks credentials
    for); it is not shown for tables on local disk, where it would only reveal the server's
    file layout.
    """

    modes: tuple[str, ...] = (URL,)
    location: str | None = None
    auxiliary_locations: tuple[str, ...] = ()

    def offers(self, mode: str) -> bool:
        return mode in self.modes


@dataclass(frozen=True)
class SharedTable:
    share: str
    schema: str
    name: str
    location: Location
    storage_options: dict[str, str]
    id: str | None = None
    share_id: str | None = None
    history_shared: bool = False
    start_version: int = 0
    display_name: str | None = None
    comment: str | None = None
    properties: dict[str, str] | None = None
    access: TableAccess = TableAccess()

    @property
    def key(self) -> str:
        """A stable identifier of the table in this server: ``share.schema.table``."""
        return name_key(f"{self.share}.{self.schema}.{self.name}")


@dataclass(frozen=True)
class SharedSchema:
    share: str
    name: str
    tables: dict[str, SharedTable] = field(default_factory=dict)
    display_name: str | None = None
    comment: str | None = None
    properties: dict[str, str] | None = None


@dataclass(frozen=True)
class Share:
    name: str
    schemas: dict[str, SharedSchema] = field(default_factory=dict)
    id: str | None = None
    display_name: str | None = None
    comment: str | None = None
    properties: dict[str, str] | None = None


class Catalog:
    """Read-only view of the configured shares (dicts keep configuration order)."""

    def __init__(self, config: ServerConfig) -> None:
        self._shares: dict[str, Share] = {}
        self._tables_by_key: dict[str, SharedTable] = {}
        for share_cfg in config.shares:
            share = Share(
                share_cfg.name,
                id=share_cfg.id,
                display_name=share_cfg.display_name,
                comment=share_cfg.comment,
                properties=share_cfg.properties,
            )
            for schema_cfg in share_cfg.schemas:
                schema = SharedSchema(
                    share.name,
                    schema_cfg.name,
                    display_name=schema_cfg.display_name,
                    comment=schema_cfg.comment,
                    properties=schema_cfg.properties,
                )
                for t in schema_cfg.tables:
                    location = parse_location(t.location)
                    table = SharedTable(
                        share=share.name,
                        schema=schema.name,
                        name=t.name,
                        location=location,
                        storage_options=config.storage_options_for(t),
                        id=t.id,
                        share_id=share.id,
                        history_shared=t.shares_history,
                        start_version=t.start_version,
                        display_name=t.display_name,
                        comment=t.comment,
                        properties=t.properties,
                        access=TableAccess(
                            tuple(t.access_modes),
                            None if location.kind == "local" else t.location.rstrip("/"),
                            tuple(a.rstrip("/") for a in t.auxiliary_locations),
                        ),
                    )
                    schema.tables[name_key(t.name)] = table
                    self._tables_by_key[table.key] = table
                share.schemas[name_key(schema.name)] = schema
            self._shares[name_key(share.name)] = share

    def shares(self, recipient: Recipient) -> list[Share]:
        return [s for s in self._shares.values() if recipient.can_see(s.name)]

    def share(self, recipient: Recipient, name: str) -> Share:
        share = self._shares.get(name_key(name))
        if share is None or not recipient.can_see(share.name):
            raise ResourceNotFoundError(f"share {echo(name)} does not exist")
        return share

    def schemas(self, recipient: Recipient, share: str) -> list[SharedSchema]:
        return list(self.share(recipient, share).schemas.values())

    def schema(self, recipient: Recipient, share: str, name: str) -> SharedSchema:
        schema = self.share(recipient, share).schemas.get(name_key(name))
        if schema is None:
            raise ResourceNotFoundError(f"schema {echo(f'{share}.{name}')} does not exist")
        return schema

    def tables(self, recipient: Recipient, share: str, schema: str) -> list[SharedTable]:
        return list(self.schema(recipient, share, schema).tables.values())

    def all_tables(self, recipient: Recipient, share: str) -> list[SharedTable]:
        return [t for s in self.share(recipient, share).schemas.values() for t in s.tables.values()]

    def table(self, recipient: Recipient, share: str, schema: str, name: str) -> SharedTable:
        table = self.schema(recipient, share, schema).tables.get(name_key(name))
        if table is None:
            raise ResourceNotFoundError(f"table {echo(f'{share}.{schema}.{name}')} does not exist")
        return table

    def table_by_key(self, key: str) -> SharedTable | None:
        """The table behind a :attr:`SharedTable.key` (used by the local file endpoint)."""
        return self._tables_by_key.get(key)
