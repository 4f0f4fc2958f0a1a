"""Summarise one side's own commits: files, rows, schema, protocol and properties.

A remove and an add of the same path in one commit are one file whose deletion vector
changed (or whose metadata was rewritten), not a file removed and another added: its rows
removed are the growth of the deletion vector's cardinality.

Rows are counted per commit as the net of the rows its added files hold and the rows its
removed files held: a copy-on-write DELETE that rewrites a 3-row file into a 2-row file
removes 1 row, not 3 rows removed and 2 added.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import msgspec
import pyarrow as pa

from deltaport.delta.model import Metadata, Protocol
from deltaport.diff.base.model import PropertyChange, ProtocolChange, SideSummary
from deltaport.diff.history.schema import schema_changes


@dataclass(frozen=True)
class TableState:
    """The table as of the base version (all None when there was no table)."""

    metadata: Metadata | None
    protocol: Protocol | None
    files: pa.Table | None


@dataclass(frozen=True)
class VersionActions:
    """The protocol and metadata actions of one commit (None when it has none)."""

    version: int
    protocol: Protocol | None
    metadata: Metadata | None


@dataclass
class _FileRow:
    path: str
    data_change: bool
    num_records: int | None
    dv_cardinality: int

    @property
    def live_rows(self) -> int | None:
        if self.num_records is None:
            return None
        return self.num_records - self.dv_cardinality


@dataclass
class _Counts:
    files_added: int = 0
    files_removed: int = 0
    rows_added: int = 0
    rows_removed: int = 0
    rows_removed_by_dv: int = 0
    files_without_row_counts: int = 0


def summarize(
    versions: Sequence[int],
    actions: Sequence[VersionActions],
    files: pa.Table | None,
    before: TableState,
) -> SideSummary:
    """Summary of commits ``versions`` given their file actions (``CHANGE_SCHEMA`` rows)."""
    counts = _count_files(files, before.files)
    after_metadata = before.metadata
    after_protocol = before.protocol
    for entry in sorted(actions, key=lambda a: a.version):
        after_metadata = entry.metadata or after_metadata
        after_protocol = entry.protocol or after_protocol
    protocol_change = (
        ProtocolChange(before.protocol, after_protocol)
        if after_protocol is not None and after_protocol != before.protocol
        else None
    )
    return SideSummary(
        commits=len(versions),
        first_version=min(versions) if versions else None,
        last_version=max(versions) if versions else None,
        files_added=counts.files_added,
        files_removed=counts.files_removed,
        rows_added=counts.rows_added,
        rows_removed=counts.rows_removed,
        rows_removed_by_deletion_vectors=counts.rows_removed_by_dv,
        files_without_row_counts=counts.files_without_row_counts,
        schema_changes=schema_changes(
            before.metadata.schema_string if before.metadata else None,
            after_metadata.schema_string if after_metadata else None,
        ),
        property_changes=_property_changes(
            before.metadata.configuration if before.metadata else {},
            after_metadata.configuration if after_metadata else {},
        ),
        protocol_change=protocol_change,
    )


def _count_files(files: pa.Table | None, base_files: pa.Table | None) -> _Counts:
    counts = _Counts()
    if files is None or files.num_rows == 0:
        return counts
    known = _RowCounts(base_files)
    by_version: dict[int, tuple[list[_FileRow], list[_FileRow]]] = {}
    for version, action, row in _rows(files):
        adds, removes = by_version.setdefault(version, ([], []))
        if action == "add":
            adds.append(row)
        elif action == "remove":
            removes.append(row)
    for version in sorted(by_version):
        adds, removes = by_version[version]
        _count_commit(counts, adds, removes, known)
    return counts


def _count_commit(
    counts: _Counts, adds: list[_FileRow], removes: list[_FileRow], known: _RowCounts
) -> None:
    """Count one commit's files, and its rows as the net of rows in and rows out."""
    removed_by_path = {r.path: r for r in removes}
    rows_in = rows_out = 0
    for add in adds:
        removed = removed_by_path.pop(add.path, None)
        if removed is None:
            counts.files_added += 1
        elif add.data_change:
            counts.rows_removed_by_dv += max(0, add.dv_cardinality - removed.dv_cardinality)
            if removed.num_records is None:
                removed = replace(removed, num_records=add.num_records)
        if removed is not None and removed.data_change:
            rows_out += _rows_of(counts, known.live_rows(removed))
        if add.data_change:
            rows_in += _rows_of(counts, add.live_rows)
        known.remember(add)
    for remove in removed_by_path.values():
        counts.files_removed += 1
        if remove.data_change:
            rows_out += _rows_of(counts, known.live_rows(remove))
    counts.rows_added += max(0, rows_in - rows_out)
    counts.rows_removed += max(0, rows_out - rows_in)


def _rows_of(counts: _Counts, live: int | None) -> int:
    if live is None:
        counts.files_without_row_counts += 1
        return 0
    return live


class _RowCounts:
    """Row counts of files added earlier: in this range, else in the base snapshot."""

    def __init__(self, base_files: pa.Table | None) -> None:
        self._base_files = base_files
        self._base: dict[str, int | None] | None = None
        self._added: dict[str, int | None] = {}

    def remember(self, row: _FileRow) -> None:
        self._added[row.path] = row.num_records

    def live_rows(self, row: _FileRow) -> int | None:
        if row.num_records is not None:
            return row.live_rows
        if row.path in self._added:
            total = self._added[row.path]
        else:
            total = self._base_counts().get(row.path)
        return None if total is None else total - row.dv_cardinality

    def _base_counts(self) -> dict[str, int | None]:
        if self._base is None:
            self._base = {}
            if self._base_files is not None:
                paths = self._base_files.column("path").to_pylist()
                stats = self._base_files.column("stats").to_pylist()
                self._base = {p: _num_records(s) for p, s in zip(paths, stats, strict=True)}
        return self._base


def _rows(files: pa.Table) -> list[tuple[int, str, _FileRow]]:
    cols = files.select(["version", "action", "path", "data_change", "stats", "deletion_vector"])
    out = []
    for version, action, path, data_change, stats, dv in zip(
        *(c.to_pylist() for c in cols.columns), strict=True
    ):
        cardinality = int(dv["cardinality"] or 0) if dv else 0
        row = _FileRow(path, data_change is not False, _num_records(stats), cardinality)
        out.append((int(version), str(action), row))
    return out


def _num_records(stats: str | None) -> int | None:
    if not stats:
        return None
    try:
        value: Any = msgspec.json.decode(stats).get("numRecords")
    except (msgspec.DecodeError, AttributeError):
        return None
    return int(value) if isinstance(value, int) else None


def _property_changes(
    before: Mapping[str, str], after: Mapping[str, str]
) -> tuple[PropertyChange, ...]:
    keys = sorted(set(before) | set(after))
    return tuple(
        PropertyChange(k, before.get(k), after.get(k))
        for k in keys
        if before.get(k) != after.get(k)
    )
