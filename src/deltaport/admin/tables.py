"""The shared tables as the admin listener sees them: listed by share and schema, and
named ``share.schema.table`` wherever a location is asked for. They come from the YAML
configuration or, on a server with a catalog database, from that database (read again
whenever it changed, so a table added while the server runs shows at once)."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

from deltaport.catalog.listings.summaries import all_tables
from deltaport.catalog.model import SharedTable
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.config.model import ServerConfig
from deltaport.protocol.echo import echo
from deltaport.protocol.errors import ResourceNotFoundError
from deltaport.protocol.names import name_key
from deltaport.storage import InvalidLocationError, Storage, parse_location


@dataclass(frozen=True)
class TableRef:
    """A table to read: a shared one (``name`` is ``share.schema.table``) or, for admins,
    any location (``name`` is None)."""

    location: str
    storage_options: dict[str, str] = field(default_factory=dict)
    name: str | None = None
    table_name: str | None = None
    """The last part of ``name``."""
    history_shared: bool = False
    share: str | None = None
    schema: str | None = None

    @property
    def label(self) -> str:
        return self.name or self.location


@dataclass(frozen=True)
class SchemaTables:
    share: str
    schema: str
    tables: tuple[TableRef, ...]


@dataclass(frozen=True)
class _Table:
    share: str
    schema: str
    name: str
    location: str
    history_shared: bool
    options: dict[str, str] | None = None
    """The table's own storage options (YAML only)."""


class ConfiguredTables:
    def __init__(self, config: ServerConfig, catalog: SqlCatalog | None = None) -> None:
        self._config = config
        self._catalog = catalog
        self._lock = threading.Lock()
        self._generation: int | None = None
        if catalog is None:
            self._load(
                _yaml_tables(config), [(s.name, sc.name) for s in config.shares for sc in s.schemas]
            )

    @property
    def groups(self) -> tuple[SchemaTables, ...]:
        """The shares' schemas and their tables, in catalog order."""
        self._refresh()
        return self._groups

    def named(self, name: str) -> TableRef:
        """The shared table ``share.schema.table``; 404 when there is none."""
        self._refresh()
        ref = self._by_name.get(name_key(name))
        if ref is None:
            raise ResourceNotFoundError(f"no shared table {echo(name)}")
        return ref

    def shared(self, name: str) -> SharedTable | None:
        """The shared table ``share.schema.table`` for the resolver's provider side
        (:meth:`TableResolver.provider_table`); None when there is none."""
        self._refresh()
        ref = self._by_name.get(name_key(name.strip()))
        if ref is None or ref.share is None or ref.schema is None or ref.table_name is None:
            return None
        return SharedTable(
            ref.share,
            ref.schema,
            ref.table_name,
            parse_location(ref.location),
            ref.storage_options,
            history_shared=ref.history_shared,
        )

    def resolve(self, text: str, side: str = "table") -> TableRef:
        """A shared table by name, else ``text`` as a location (with the options of the
        ``storage`` prefixes it falls under); 404 when it is neither a shared table nor a
        location where anything exists."""
        self._refresh()
        ref = self._by_name.get(name_key(text.strip()))
        if ref is not None:
            return ref
        location = text.strip()
        ref = TableRef(location, self._config.location_settings(location)[0])
        if not _exists(ref):
            raise ResourceNotFoundError(
                f"{side} {echo(location)} is neither a shared table (share.schema.table) "
                "nor a location where anything exists"
            )
        return ref

    def _refresh(self) -> None:
        if self._catalog is None:
            return
        with self._lock:
            generation = self._catalog.generation()
            if generation == self._generation:
                return
            read_at, rows = all_tables(self._catalog.database)
            tables = [_Table(t.share, t.schema, t.name, t.location, t.history_shared) for t in rows]
            self._load(tables, [(t.share, t.schema) for t in tables])
            self._generation = read_at

    def _load(self, tables: Iterable[_Table], schemas: list[tuple[str, str]]) -> None:
        by_schema: dict[tuple[str, str], list[TableRef]] = {
            (name_key(share), name_key(schema)): [] for share, schema in schemas
        }
        by_name: dict[str, TableRef] = {}
        for t in tables:
            options = self._config.location_settings(t.location, t.options)[0]
            name = f"{t.share}.{t.schema}.{t.name}"
            ref = TableRef(t.location, options, name, t.name, t.history_shared, t.share, t.schema)
            by_schema[(name_key(t.share), name_key(t.schema))].append(ref)
            by_name[name_key(name)] = ref
        shown: dict[tuple[str, str], SchemaTables] = {}
        for share, schema in schemas:
            key = (name_key(share), name_key(schema))
            shown.setdefault(key, SchemaTables(share, schema, tuple(by_schema[key])))
        self._groups = tuple(shown.values())
        self._by_name = by_name


def _yaml_tables(config: ServerConfig) -> list[_Table]:
    return [
        _Table(share.name, schema.name, t.name, t.location, t.shares_history, t.storage_options)
        for share in config.shares
        for schema in share.schemas
        for t in schema.tables
    ]


def _exists(ref: TableRef) -> bool:
    try:
        storage = Storage(ref.location, ref.storage_options or None)
    except InvalidLocationError:
        return False
    return storage.holds_anything()
