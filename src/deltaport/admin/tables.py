"""The configured tables as the admin listener sees them: listed by share and schema, and
named ``share.schema.table`` wherever a location is asked for."""

from __future__ import annotations

from dataclasses import dataclass, field

from deltaport.config.model import ServerConfig, TableConfig
from deltaport.protocol.errors import ResourceNotFoundError
from deltaport.protocol.names import name_key


@dataclass(frozen=True)
class TableRef:
    """A table to read: a configured one (``name`` is ``share.schema.table``) or, for
    admins, any location (``name`` is None)."""

    location: str
    storage_options: dict[str, str] = field(default_factory=dict)
    name: str | None = None
    config: TableConfig | None = None

    @property
    def label(self) -> str:
        return self.name or self.location


@dataclass(frozen=True)
class SchemaTables:
    share: str
    schema: str
    tables: tuple[TableRef, ...]


class ConfiguredTables:
    def __init__(self, config: ServerConfig) -> None:
        self._config = config
        self._by_name: dict[str, TableRef] = {}
        groups: list[SchemaTables] = []
        for share in config.shares:
            for schema in share.schemas:
                refs = []
                for table in schema.tables:
                    ref = TableRef(
                        table.location,
                        config.storage_options_for(table),
                        f"{share.name}.{schema.name}.{table.name}",
                        table,
                    )
                    refs.append(ref)
                    self._by_name[name_key(ref.label)] = ref
                groups.append(SchemaTables(share.name, schema.name, tuple(refs)))
        self.groups = tuple(groups)

    def named(self, name: str) -> TableRef:
        """The configured table ``share.schema.table``; 404 when there is none."""
        ref = self._by_name.get(name_key(name))
        if ref is None:
            raise ResourceNotFoundError(f"no configured table {name!r}")
        return ref

    def resolve(self, text: str) -> TableRef:
        """A configured table by name, else ``text`` as a location (with the options of
        the ``storage`` prefixes it falls under)."""
        ref = self._by_name.get(name_key(text.strip()))
        if ref is not None:
            return ref
        location = text.strip()
        probe = TableConfig(name="probe", location=location)
        return TableRef(location, self._config.storage_options_for(probe))
