"""Table differs: a two-dot diff ``left..right`` of two copies (branches) of a table.

The Delta differ compares the two logs' histories, finds their common base version and
lists the commits only ``right`` has, with summaries of files, rows, schema, protocol
and property changes on each side. Other formats plug in through the
``deltaport.differs`` entry-point group.

Names are imported on first use, so that ``deltaport diff`` of two Delta logs does not
load the row diff (and the Delta Sharing client under it).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
    from deltaport.diff.registry import (
        ENTRY_POINT_GROUP,
        TableDiffer,
        detect_differ,
        get_differ,
        registered_formats,
    )
    from deltaport.diff.render import (
        render_text,
        to_json,
    )
    from deltaport.diff.rows.row_diff import (
        RowChange,
        RowDiff,
        RowDiffSummary,
        diff_rows,
    )

_EXPORTS = {
    "diff_tables": "deltaport.diff.api",
    "DiffError": "deltaport.diff.base.errors",
    "InvalidBaseVersionError": "deltaport.diff.base.errors",
    "InvalidPageTokenError": "deltaport.diff.base.errors",
    "TablesNotFoundError": "deltaport.diff.base.errors",
    "UnknownTableFormatError": "deltaport.diff.base.errors",
    "ColumnChange": "deltaport.diff.base.model",
    "DiffEntry": "deltaport.diff.base.model",
    "DiffMetrics": "deltaport.diff.base.model",
    "OperationType": "deltaport.diff.base.model",
    "PropertyChange": "deltaport.diff.base.model",
    "ProtocolChange": "deltaport.diff.base.model",
    "SideSummary": "deltaport.diff.base.model",
    "TableDiff": "deltaport.diff.base.model",
    "TableDiffType": "deltaport.diff.base.model",
    "ENTRY_POINT_GROUP": "deltaport.diff.registry",
    "TableDiffer": "deltaport.diff.registry",
    "detect_differ": "deltaport.diff.registry",
    "get_differ": "deltaport.diff.registry",
    "registered_formats": "deltaport.diff.registry",
    "render_text": "deltaport.diff.render",
    "to_json": "deltaport.diff.render",
    "RowChange": "deltaport.diff.rows.row_diff",
    "RowDiff": "deltaport.diff.rows.row_diff",
    "RowDiffSummary": "deltaport.diff.rows.row_diff",
    "diff_rows": "deltaport.diff.rows.row_diff",
}

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
    "detect_differ",
    "diff_rows",
    "diff_tables",
    "get_differ",
    "registered_formats",
    "render_text",
    "to_json",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'deltaport.diff' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
