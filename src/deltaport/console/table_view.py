"""What the table pages show, read one page at a time through the resolver's provider side
(:meth:`TableResolver.provider_table`: its version and timestamp rules, its refusals and
its cache of open tables): the overview and schema tree of a snapshot, a page of history,
of active files, of change-feed actions, and the first rows."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from deltaport.catalog.model import SharedTable
from deltaport.delta import DeltaTable, Snapshot
from deltaport.delta.errors import CdfNotEnabledError
from deltaport.protocol.schema import (
    ArrayType,
    DataType,
    MapType,
    StructType,
    parse_schema,
    type_string,
)
from deltaport.read import scan_snapshot, table_arrow_schema
from deltaport.read.scan import read_change_data
from deltaport.sharing import TableResolver, VersionAsk

HISTORY_PAGE = 25
FILES_PAGE = 50
ROWS = 20
CHANGE_VERSIONS = 10
CHANGE_ACTIONS = 200


@dataclass(frozen=True)
class SchemaNode:
    """A field of the schema tree: ``type`` is the full type, ``children`` the nested
    fields (``element``, ``key`` and ``value`` stand for array and map contents)."""

    name: str
    type: str
    nullable: bool
    physical_name: str | None
    field_id: int | None
    children: tuple[SchemaNode, ...] = field(default_factory=tuple)


def snapshot(
    resolver: TableResolver, table: SharedTable, version: int | None, timestamp: str | None
) -> Snapshot:
    return resolver.read(table, VersionAsk(version, timestamp)).snapshot


def schema_tree(snap: Snapshot) -> tuple[SchemaNode, ...]:
    return _nodes(parse_schema(snap.metadata.schema_string))


def _nodes(struct: StructType) -> tuple[SchemaNode, ...]:
    return tuple(
        SchemaNode(
            f.name,
            type_string(f.type),
            f.nullable,
            f.physical_name if f.physical_name != f.name else None,
            f.field_id,
            _children(f.type),
        )
        for f in struct.fields
    )


def _children(data_type: DataType) -> tuple[SchemaNode, ...]:
    if isinstance(data_type, StructType):
        return _nodes(data_type)
    if isinstance(data_type, ArrayType):
        return (_content("element", data_type.element_type, data_type.contains_null),)
    if isinstance(data_type, MapType):
        return (
            _content("key", data_type.key_type, False),
            _content("value", data_type.value_type, data_type.value_contains_null),
        )
    return ()


def _content(name: str, data_type: DataType, nullable: bool) -> SchemaNode:
    return SchemaNode(name, type_string(data_type), nullable, None, None, _children(data_type))


@dataclass(frozen=True)
class HistoryPage:
    entries: list[dict[str, Any]]
    older: int | None
    """The version the next (older) page starts at, or None on the last page."""


def history_page(resolver: TableResolver, table: SharedTable, before: int | None) -> HistoryPage:
    """Up to :data:`HISTORY_PAGE` commits, newest first, from ``before`` down."""
    delta = resolver.delta_table(table)
    listing = delta.listing()
    latest = listing.latest_version
    top = latest if before is None else min(before, latest)
    earliest = top
    while earliest - 1 in listing.commits and earliest > top - HISTORY_PAGE + 1:
        earliest -= 1
    entries = delta.history(earliest, top) if top in listing.commits else []
    older = earliest - 1 if earliest - 1 in listing.commits else None
    return HistoryPage(
        [
            {
                "version": e.version,
                "timestamp": e.timestamp,
                "operation": e.commit_info.get("operation", ""),
                "parameters": e.commit_info.get("operationParameters") or {},
                "metrics": e.commit_info.get("operationMetrics") or {},
            }
            for e in reversed(entries)
        ],
        older,
    )


def files_page(snap: Snapshot, offset: int) -> list[dict[str, Any]]:
    """Active files ``offset..offset + FILES_PAGE`` of ``snap`` with their stats."""
    rows = snap.files.slice(offset, FILES_PAGE).select(
        ["path", "partition_values", "size", "modification_time", "stats", "deletion_vector"]
    )
    out = []
    for row in rows.to_pylist():
        stats = json.loads(row["stats"]) if row["stats"] else {}
        dv = row["deletion_vector"]
        out.append(
            {
                "path": row["path"],
                "partition_values": dict(row["partition_values"] or []),
                "size": row["size"],
                "modification_time": row["modification_time"],
                "num_records": stats.get("numRecords"),
                "stats": {k: v for k, v in stats.items() if k != "numRecords"},
                "deleted_rows": dv["cardinality"] if dv else None,
            }
        )
    return out


def first_rows(
    resolver: TableResolver, table: SharedTable, snap: Snapshot
) -> tuple[list[str], list[list[Any]]]:
    """Column names and the first :data:`ROWS` rows of ``snap`` (deleted rows left out)."""
    schema = table_arrow_schema(snap.metadata)
    rows: list[list[Any]] = []
    for batch in scan_snapshot(snap, resolver.delta_table(table).storage, limit=ROWS):
        for row in batch.to_pylist():
            rows.append([row[name] for name in schema.names])
        if len(rows) >= ROWS:
            break
    return schema.names, rows[:ROWS]


@dataclass(frozen=True)
class ChangesPage:
    start: int
    end: int
    actions: list[dict[str, Any]]
    truncated: bool
    next_start: int | None
    feed_columns: list[str] = field(default_factory=list)
    feed_rows: list[list[Any]] = field(default_factory=list)
    """The first :data:`ROWS` rows of the change data feed of the versions shown."""
    feed_note: str | None = None
    """Why there are no feed rows (the feed is off in these versions), if so."""


def changes_page(
    resolver: TableResolver, table: SharedTable, start: int, end: int | None
) -> ChangesPage:
    """File actions (add, remove, cdc) of at most :data:`CHANGE_VERSIONS` versions from
    ``start``, at most :data:`CHANGE_ACTIONS` of them (a range the sharing API refuses,
    refused alike)."""
    delta = resolver.delta_table(table)
    latest = delta.latest_version()
    resolver.check_range(table, start, latest if end is None else end, latest)
    last = min(latest if end is None else end, start + CHANGE_VERSIONS - 1)
    files = delta.changes(start, last).files
    shown = files.slice(0, CHANGE_ACTIONS).select(
        ["version", "timestamp", "action", "path", "size", "data_change", "partition_values"]
    )
    actions = [
        {**r, "partition_values": dict(r["partition_values"] or [])} for r in shown.to_pylist()
    ]
    wanted_end = latest if end is None else min(end, latest)
    columns, rows, note = _feed_rows(delta, start, last)
    return ChangesPage(
        start,
        last,
        actions,
        files.num_rows > CHANGE_ACTIONS,
        last + 1 if last < wanted_end else None,
        columns,
        rows,
        note,
    )


def _feed_rows(
    delta: DeltaTable, start: int, last: int
) -> tuple[list[str], list[list[Any]], str | None]:
    """The first rows of the change data feed of ``start..last`` (``_change_type``,
    ``_commit_version`` and ``_commit_timestamp`` included), or why there are none."""
    try:
        changes = delta.change_data(start, last)
    except CdfNotEnabledError as exc:
        return [], [], str(exc)
    rows: list[list[Any]] = []
    names: list[str] = []
    for batch in read_change_data(changes, delta.storage, limit=ROWS):
        names = batch.schema.names
        rows += [[row[name] for name in names] for row in batch.to_pylist()]
    return names, rows[:ROWS], None
