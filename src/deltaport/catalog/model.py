"""The catalog's model: shares, schemas, tables and recipients, and a view of them that
answers "what may this recipient see?".

Names are case-insensitive. A :class:`Recipient` sees every share unless its ``shares``
set says otherwise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from deltaport.catalog.partition_filter import bind
from deltaport.catalog.recipient_access import ANYWHERE, IpAccessList
from deltaport.protocol.credentials import URL
from deltaport.protocol.echo import echo
from deltaport.protocol.errors import ResourceNotFoundError
from deltaport.protocol.names import name_key
from deltaport.protocol.predicates import Expr
from deltaport.storage import Location


@dataclass(frozen=True)
class Recipient:
    """Who is asking. ``shares`` (name keys) limits what the recipient sees; None: all.
    ``properties`` are what partition filters may name. ``credential`` names the bearer
    token the request came with (see :func:`deltaport.catalog.tokens.credential_id`): page
    tokens, refresh tokens and local file URLs are bound to it, so they end with it."""

    name: str
    shares: frozenset[str] | None = None
    properties: Mapping[str, str] = field(default_factory=dict)
    credential: str = ""
    ip_access: IpAccessList = ANYWHERE
    """The addresses its requests may come from (see :mod:`deltaport.catalog.recipient_access`)."""

    @property
    def binding(self) -> str:
        """What a token handed to this recipient is bound to: its name and credential."""
        return f"{self.name}\0{self.credential}"

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
    partition_filter: str | None = None
    """The filter as configured (naming ``CURRENT_RECIPIENT(...)``); see
    :mod:`deltaport.catalog.partition_filter`."""
    row_filter: Expr | None = None
    """The partition filter bound to the asking recipient (None: every file)."""
    scope: str = ""
    """Who the table was looked up for: page and refresh tokens are bound to it, so that
    one recipient cannot continue another's answer."""
    reader: str | None = None
    """The catalog recipient the table was looked up for (its local file URLs are bound to
    it); None for the one recipient of a YAML configuration."""
    credential: str = ""
    """The reader's credential (:attr:`Recipient.credential`): its file URLs end with it."""

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


class CatalogView:
    """What a catalog holds at one moment: shares by name (in their given order), and
    lookups that answer a recipient only with what it may see. A share the recipient was
    not granted is answered as one that does not exist."""

    def __init__(self, shares: list[Share]) -> None:
        self._shares: dict[str, Share] = {name_key(s.name): s for s in shares}
        self._order = {key: i for i, key in enumerate(self._shares)}
        self._tables_by_key: dict[str, SharedTable] = {
            t.key: t for s in shares for sc in s.schemas.values() for t in sc.tables.values()
        }

    def replaced(
        self, changed: Mapping[str, Share | None], order: Sequence[str] | None = None
    ) -> CatalogView:
        """This view with the shares in ``changed`` (by name key) put in, or taken out
        (None). ``order`` lists every share's key, in order, when shares were added or taken
        out. Builds nothing of the shares that did not change."""
        view = CatalogView([])
        shares = dict(self._shares)
        tables = dict(self._tables_by_key)
        for key, share in changed.items():
            old = shares.pop(key, None) if share is None else shares.get(key)
            if old is not None:
                for schema in old.schemas.values():
                    for table in schema.tables.values():
                        tables.pop(table.key, None)
            if share is not None:
                shares[key] = share
                tables.update(
                    (t.key, t) for sc in share.schemas.values() for t in sc.tables.values()
                )
        if order is not None:
            shares = {key: shares[key] for key in order}
            view._order = {key: i for i, key in enumerate(shares)}
        else:
            view._order = self._order
        view._shares = shares
        view._tables_by_key = tables
        return view

    def shares(self, recipient: Recipient) -> list[Share]:
        """The shares ``recipient`` may see, in catalog order (from its grants when it has
        fewer than the catalog has shares: a catalog of thousands is not walked)."""
        granted = recipient.shares
        if granted is None:
            return list(self._shares.values())
        if len(granted) >= len(self._shares):
            return [s for key, s in self._shares.items() if key in granted]
        keys = sorted((k for k in granted if k in self._shares), key=self._order.__getitem__)
        return [self._shares[k] for k in keys]

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
        """The table as ``recipient`` reads it: its partition filter bound to the
        recipient's properties."""
        table = self.schema(recipient, share, schema).tables.get(name_key(name))
        if table is None:
            raise ResourceNotFoundError(f"table {echo(f'{share}.{schema}.{name}')} does not exist")
        if table.partition_filter is None and recipient.shares is None:
            return table
        row_filter = None
        if table.partition_filter is not None:
            row_filter = bind(table.partition_filter, recipient.properties)
        return replace(
            table,
            row_filter=row_filter,
            scope=f"{recipient.binding}\0{row_filter!r}",
            reader=recipient.name if recipient.shares is not None else None,
            credential=recipient.credential,
        )

    def table_by_key(self, key: str) -> SharedTable | None:
        """The table behind a :attr:`SharedTable.key` (used by the local file endpoint)."""
        return self._tables_by_key.get(key)
