"""File statistics of an output file, computed from its own rows (Delta's ``stats``
JSON): a masked column's statistics are those of the masked values."""

from __future__ import annotations

import datetime
import math
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc


def _bounded(data_type: pa.DataType) -> bool:
    return bool(
        pa.types.is_integer(data_type)
        or pa.types.is_floating(data_type)
        or pa.types.is_string(data_type)
        or pa.types.is_large_string(data_type)
        or pa.types.is_date(data_type)
        or pa.types.is_timestamp(data_type)
    )


def _json_value(value: Any, data_type: pa.DataType) -> Any:
    if isinstance(value, datetime.datetime):
        text = value.isoformat(timespec="milliseconds")
        if data_type.tz is not None:
            text = (
                value.astimezone(datetime.UTC)
                .replace(tzinfo=None)
                .isoformat(timespec="milliseconds")
                + "Z"
            )
        return text
    if isinstance(value, datetime.date):
        return value.isoformat()
    return value


def _bounds(column: pa.ChunkedArray) -> tuple[Any, Any] | None:
    if column.null_count == len(column):
        return None
    found = pc.min_max(column)
    low, high = found["min"].as_py(), found["max"].as_py()
    if isinstance(low, float) and (math.isnan(low) or math.isnan(high)):
        return None
    if pa.types.is_timestamp(column.type):
        # Delta's bounds have millisecond precision: round outwards
        low = low.replace(microsecond=low.microsecond // 1000 * 1000)
        high_ms = high.replace(microsecond=high.microsecond // 1000 * 1000)
        if high_ms != high:
            high = high_ms + datetime.timedelta(milliseconds=1)
    return _json_value(low, column.type), _json_value(high, column.type)


def file_stats(table: pa.Table) -> dict[str, Any]:
    """``numRecords``, and for each top-level column its ``nullCount`` and, for ordered
    primitive types, ``minValues`` and ``maxValues``."""
    minimum: dict[str, Any] = {}
    maximum: dict[str, Any] = {}
    nulls: dict[str, int] = {}
    for field, column in zip(table.schema, table.columns, strict=True):
        if pa.types.is_nested(field.type):
            continue
        nulls[field.name] = column.null_count
        if _bounded(field.type):
            bounds = _bounds(column)
            if bounds is not None:
                minimum[field.name], maximum[field.name] = bounds
    return {
        "numRecords": table.num_rows,
        "minValues": minimum,
        "maxValues": maximum,
        "nullCount": nulls,
    }
