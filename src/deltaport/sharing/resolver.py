"""The resolver: a recipient's question about a shared table, answered once for every
surface. It looks the table up as the recipient may see it (the grant; a share not granted
answers like one that does not exist), applies the history and ``startVersion`` rules,
reads the snapshot through the engine's table cache and evaluates the bound partition
filter on its files -- each rule once per question (:class:`SharingRules`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace

import pyarrow as pa
import pyarrow.compute as pc

from deltaport.catalog.model import CatalogView, Recipient, SharedTable
from deltaport.delta import DeltaTable, Snapshot, open_table
from deltaport.delta.cache import TABLE_BUDGET
from deltaport.delta.errors import (
    TimestampOutOfRangeError,
    UnsupportedFeatureError,
    VersionNotFoundError,
)
from deltaport.delta.model import Metadata
from deltaport.protocol.echo import echo
from deltaport.protocol.errors import ResourceNotFoundError
from deltaport.sharing.refusals import RefusalKind, TableRefusal
from deltaport.sharing.rules import SharingRules, VersionAsk, table_name

OpenTable = Callable[[str, Mapping[str, str]], DeltaTable]
ProviderLookup = Callable[[str], SharedTable | None]
"""A provider's own lookup of its table ``share.schema.table``: None when there is none."""


@dataclass(frozen=True)
class TableRead:
    """A snapshot as the asking recipient reads it: ``mask`` says which of the snapshot's
    files it sees (None: all), ``num_files`` and ``size`` count those."""

    table: SharedTable
    snapshot: Snapshot
    mask: pa.Array | None
    num_files: int
    size: int

    @property
    def version(self) -> int:
        return self.snapshot.version

    def visible(self, files: pa.Table) -> pa.Table:
        """The rows of ``files`` -- the snapshot's files in their order, with any columns
        added -- that the recipient sees."""
        return files if self.mask is None else files.filter(self.mask)


@dataclass(frozen=True)
class TableHistory:
    """What a reader of every version is offered: the latest snapshot and the versions."""

    latest: Snapshot
    versions: range


class TableResolver:
    """Answers every surface's question about a shared table; ``opener`` opens the Delta
    table of a location (the engine's shared tables by default), ``rules`` evaluates the
    sharing rules."""

    def __init__(
        self,
        opener: OpenTable = open_table,
        rules: SharingRules | None = None,
        budget_bytes: int | None = None,
    ) -> None:
        """``budget_bytes``: the limit of the process's one memory budget, which holds
        the open tables with their snapshots and what the server builds from them."""
        self._open = opener
        self.rules = rules or SharingRules()
        self.budget = TABLE_BUDGET
        if budget_bytes is not None:
            self.budget.limit = budget_bytes

    # -- the grant ---------------------------------------------------------------------------
    def table(
        self, view: CatalogView, recipient: Recipient, share: str, schema: str, name: str
    ) -> SharedTable:
        """The table as ``recipient`` reads it (its location, its partition filter bound to
        the recipient's properties); refused as not found when not granted."""
        try:
            return view.table(recipient, share, schema, name)
        except ResourceNotFoundError as exc:
            raise TableRefusal(RefusalKind.NOT_FOUND, exc.message) from None

    def provider_table(self, lookup: ProviderLookup, name: str) -> SharedTable:
        """The table ``share.schema.table`` as its provider reads it: any table of the
        catalog (no grant), every version its log holds and every file (no
        ``startVersion``, no partition filter); refused as not found when there is none."""
        table = lookup(name)
        if table is None:
            raise TableRefusal(RefusalKind.NOT_FOUND, f"table {echo(name)} does not exist")
        return replace(
            table, history_shared=True, start_version=0, partition_filter=None, row_filter=None
        )

    def existing_version(self, table: SharedTable, version: int) -> int:
        """``version``, refused as the sharing API refuses it when it is past the latest
        (without reading its snapshot)."""
        if version > self.latest_version(table):
            raise unavailable(table)
        return version

    def delta_table(self, table: SharedTable) -> DeltaTable:
        return self._open(table.location.uri, table.storage_options)

    # -- versions ----------------------------------------------------------------------------
    def latest_version(self, table: SharedTable) -> int:
        """The latest version (its commit parsed once, so a corrupt one fails here too)."""
        delta_table = self.delta_table(table)
        latest = delta_table.latest_version()
        delta_table.check_readable(latest)
        return latest

    def version_from(self, table: SharedTable, timestamp: str) -> int:
        """The earliest version at or after ``timestamp`` (the history rules applied)."""
        at = self.rules.check_ask(table, VersionAsk(timestamp=timestamp))
        assert at is not None, "a timestamp was asked"
        with engine_refusals(table):
            version = self.delta_table(table).version_at(at, at_or_after=True)
        self.rules.check_version(table, version, timestamp)
        return version

    def checked_version(self, table: SharedTable, ask: VersionAsk) -> int | None:
        """The version ``ask`` names, checked without reading a snapshot (the latest one
        when it names none); None for a timestamp, resolved with its snapshot."""
        self.rules.check_ask(table, ask)
        if ask.timestamp is not None:
            return None
        if ask.version is None:
            return self.latest_version(table)
        return ask.version

    # -- snapshots ---------------------------------------------------------------------------
    def read(self, table: SharedTable, ask: VersionAsk) -> TableRead:
        """The snapshot ``ask`` names, as the recipient reads it."""
        at = self.rules.check_ask(table, ask)
        with engine_refusals(table):
            delta_table = self.delta_table(table)
            if at is not None:
                snapshot = delta_table.snapshot(timestamp=at)
            else:
                snapshot = delta_table.snapshot(ask.version)
        self.rules.check_version(table, snapshot.version, None)
        return self._as_read(table, snapshot)

    def pinned(self, table: SharedTable, version: int) -> TableRead:
        """The snapshot a page or refresh token pinned: the history rules were applied to
        the question that pinned it (the latest version, then)."""
        with engine_refusals(table):
            snapshot = self.delta_table(table).snapshot(version)
        return self._as_read(table, snapshot)

    def history(self, table: SharedTable, every_version: bool) -> TableHistory:
        """The latest snapshot and the versions a reader is offered (one per version from
        ``startVersion`` on with history shared and ``every_version``). The engine's
        failures, an unsupported feature too, pass on to the surface unchanged."""
        delta_table = self.delta_table(table)
        latest = delta_table.snapshot()
        earliest = None
        if table.history_shared and every_version and table.start_version < latest.version:
            earliest = delta_table.listing().earliest_version
        versions = self.rules.served_versions(table, latest.version, earliest, every_version)
        return TableHistory(latest, versions)

    # -- ranges ------------------------------------------------------------------------------
    def check_range(self, table: SharedTable, start: int, end: int, latest: int) -> None:
        self.rules.check_range(table, start, end, latest)

    def require_history(self, table: SharedTable) -> None:
        self.rules.require_history(table)

    def visible_changes(self, table: SharedTable, files: pa.Table, metadata: Metadata) -> pa.Table:
        """The file actions of a range the recipient sees (its partition filter)."""
        mask = self.rules.visible(table, files, metadata)
        return files if mask is None else files.filter(mask)

    def _as_read(self, table: SharedTable, snapshot: Snapshot) -> TableRead:
        mask = self.rules.visible(table, snapshot.files, snapshot.metadata)
        if mask is None:
            return TableRead(table, snapshot, None, snapshot.num_files, snapshot.size_in_bytes)
        seen = snapshot.files.filter(mask)
        size = int(pc.sum(seen.column("size")).as_py() or 0)
        return TableRead(table, snapshot, mask, seen.num_rows, size)


def unavailable(table: SharedTable) -> TableRefusal:
    return TableRefusal(
        RefusalKind.VERSION_UNAVAILABLE,
        f"the asked version of table {table_name(table)} is not available",
    )


@contextmanager
def engine_refusals(table: SharedTable) -> Iterator[None]:
    """The engine's answers to what was asked as refusals, without storage locations;
    its other failures (a corrupt log, storage) pass on to the surface."""
    name = table_name(table)
    try:
        yield
    except VersionNotFoundError:
        raise unavailable(table) from None
    except TimestampOutOfRangeError:
        raise TableRefusal(
            RefusalKind.VERSION_UNAVAILABLE,
            f"no version of table {name} matches the asked timestamp",
        ) from None
    except UnsupportedFeatureError as exc:
        raise TableRefusal(
            RefusalKind.UNSUPPORTED_TABLE, f"table {name} cannot be shared: {exc}"
        ) from None
