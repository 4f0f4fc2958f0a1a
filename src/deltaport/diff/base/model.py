"""The result of a table diff as typed values.

The shape follows the lakeFS "Delta Table Differ" response (``table_diff_type`` and
``results`` of ``id`` / ``timestamp`` / ``operation`` / ``operation_type`` /
``operation_content``) and adds per-side summaries, the base version, paging and metrics.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from deltaport.delta.model import Protocol


class TableDiffType(StrEnum):
    CREATED = "created"
    """The table exists only on the right; the results are its whole history."""
    DROPPED = "dropped"
    """The table exists only on the left; the results are its whole history."""
    CHANGED = "changed"
    """Both exist and at least one side has commits the other lacks."""
    NONE = "none"
    """Both exist with the same history."""


class OperationType(StrEnum):
    CREATE = "create"
    UPDATE = "update"
    DELETE = "delete"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class DiffEntry:
    """One commit of the diff. ``operation_content`` holds ``operation_parameters`` and
    ``operation_metrics`` as the writer recorded them."""

    id: int
    timestamp: int
    operation: str
    operation_type: OperationType
    operation_content: Mapping[str, Any]


@dataclass(frozen=True)
class ColumnChange:
    """A column (dotted path for nested fields) ``added``, ``dropped``, ``type_changed`` or
    ``renamed``; ``before`` / ``after`` hold types, or names for renames."""

    kind: str
    column: str
    before: str | None = None
    after: str | None = None


@dataclass(frozen=True)
class PropertyChange:
    """A table property set (``before`` None), changed, or unset (``after`` None)."""

    key: str
    before: str | None
    after: str | None


@dataclass(frozen=True)
class ProtocolChange:
    before: Protocol | None
    after: Protocol


@dataclass(frozen=True)
class SideSummary:
    """What one side's own commits (those the other side lacks) did to the table.

    Row counts come from ``numRecords`` in file stats, less deletion-vector cardinalities,
    netted per commit (a commit that rewrites files counts only the rows it really added or
    removed); compaction (``dataChange: false``) changes no rows. Files without a row count
    are counted in ``files_without_row_counts``: the row numbers are exact only when it is 0.
    """

    commits: int
    first_version: int | None
    last_version: int | None
    files_added: int
    files_removed: int
    rows_added: int
    rows_removed: int
    rows_removed_by_deletion_vectors: int
    files_without_row_counts: int
    schema_changes: tuple[ColumnChange, ...]
    property_changes: tuple[PropertyChange, ...]
    protocol_change: ProtocolChange | None

    @property
    def net_rows(self) -> int:
        return self.rows_added - self.rows_removed


@dataclass(frozen=True)
class DiffMetrics:
    """``log_entries_read``: commit entries read from both logs (each version once per
    side); ``run_time_ms``: wall time of the diff."""

    log_entries_read: int
    run_time_ms: float


@dataclass(frozen=True)
class TableDiff:
    """A two-dot diff ``left..right``: the commits ``right`` has and ``left`` has not.

    ``results`` is one page of them, newest first; ``next_page_token`` fetches the rest.
    ``left`` / ``right`` summarise each side's own commits since ``base_version``.
    ``notes`` explain anything that limited the comparison (cleaned-up logs, no common base).
    """

    table_diff_type: TableDiffType
    table_format: str
    left_uri: str
    right_uri: str
    base_version: int | None
    left_version: int | None
    right_version: int | None
    results: tuple[DiffEntry, ...]
    left: SideSummary | None
    right: SideSummary | None
    notes: tuple[str, ...]
    next_page_token: str | None
    metrics: DiffMetrics
