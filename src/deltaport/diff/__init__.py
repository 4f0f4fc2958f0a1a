"""Table differs: a two-dot diff ``left..right`` of two copies (branches) of a table.

The Delta differ compares the two logs' histories, finds their common base version and
lists the commits only ``right`` has, with summaries of files, rows, schema, protocol
and property changes on each side. Other formats plug in through the
``deltaport.differs`` entry-point group.
"""

from deltaport.diff.api import diff_tables
from deltaport.diff.base.errors import (
    DiffError,
    InvalidBaseVersionError,
    InvalidPageTokenError,
    TablesNotFoundError,
    UnknownTableFormatError,
)
from deltaport.diff.base.model import (
    ColumnChange,
    DiffEntry,
    DiffMetrics,
    OperationType,
    PropertyChange,
    ProtocolChange,
    SideSummary,
    TableDiff,
    TableDiffType,
)
from deltaport.diff.cli import cli_main
from deltaport.diff.registry import (
    ENTRY_POINT_GROUP,
    TableDiffer,
    detect_differ,
    get_differ,
    registered_formats,
)
from deltaport.diff.render import render_text, to_json
from deltaport.diff.rows.row_diff import RowChange, RowDiff, RowDiffSummary, diff_rows

__all__ = [
    "ENTRY_POINT_GROUP",
    "ColumnChange",
    "DiffEntry",
    "DiffError",
    "DiffMetrics",
    "InvalidBaseVersionError",
    "InvalidPageTokenError",
    "OperationType",
    "PropertyChange",
    "ProtocolChange",
    "RowChange",
    "RowDiff",
    "RowDiffSummary",
    "SideSummary",
    "TableDiff",
    "TableDiffType",
    "TableDiffer",
    "TablesNotFoundError",
    "UnknownTableFormatError",
    "cli_main",
    "detect_differ",
    "diff_rows",
    "diff_tables",
    "get_differ",
    "registered_formats",
    "render_text",
    "to_json",
]
