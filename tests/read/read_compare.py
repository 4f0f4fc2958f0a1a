"""Order-insensitive comparison of Arrow tables for the corpus checks.

Expected files and other readers store some values differently from deltaport (Spark's
expected parquet has INT96 / ns timestamps, deltalake may return ns or other zones,
decimals of another scale, large strings): values are normalised before comparing, so
only these representation differences are tolerated.
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from typing import Any

import pyarrow as pa


def normalise_value(value: Any) -> Any:
    """A comparable form: datetimes -> naive UTC ISO text, numbers -> rounded floats (NaN
    kept), maps (lists of pairs) -> sorted tuples, structs -> sorted items."""
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return ("ts", value.isoformat())
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, float):
        return ("nan",) if math.isnan(value) else ("num", round(value, 5))
    if isinstance(value, int | Decimal):
        return ("num", round(float(value), 5))
    if isinstance(value, dict):
        return ("struct", tuple(sorted((k, normalise_value(v)) for k, v in value.items())))
    if isinstance(value, list):
        items = [normalise_value(v) for v in value]
        if value and all(isinstance(v, tuple) and len(v) == 2 for v in value):
            return ("map", tuple(sorted(items, key=repr)))
        return ("list", tuple(items))
    if isinstance(value, tuple):
        return tuple(normalise_value(v) for v in value)
    return value


def normalised_rows(table: pa.Table, columns: list[str]) -> list[tuple[Any, ...]]:
    """Rows of ``columns`` normalised and sorted."""
    data = [table.column(c).to_pylist() for c in columns]
    rows = [tuple(normalise_value(col[i]) for col in data) for i in range(table.num_rows)]
    return sorted(rows, key=repr)


def _flat(arrow_type: pa.DataType) -> bool:
    return not pa.types.is_nested(arrow_type)


def same_rows(expected: pa.Table, got: pa.Table, columns: list[str]) -> bool:
    """True when both tables hold the same rows of ``columns`` in any order.

    Flat tables are first compared in Arrow (expected cast to deltaport's types, then
    sorted); otherwise (nested columns, casts that do not apply, NaNs) row by row in Python.
    """
    if expected.num_rows != got.num_rows:
        return False
    got = got.select(columns)
    expected = expected.select(columns)
    if all(_flat(f.type) for f in got.schema):
        try:
            expected = expected.cast(got.schema)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass
        else:
            keys = [(c, "ascending") for c in columns]
            if expected.sort_by(keys).equals(got.sort_by(keys)):
                return True
    return normalised_rows(expected, columns) == normalised_rows(got, columns)


def first_difference(expected: pa.Table, got: pa.Table, columns: list[str]) -> str:
    """A short description of the first differing row (for assertion messages)."""
    e = normalised_rows(expected, columns)
    g = normalised_rows(got, columns)
    if len(e) != len(g):
        return f"{len(e)} expected rows, {len(g)} read"
    for a, b in zip(e, g, strict=True):
        if a != b:
            return f"expected {a!r}\n    read {b!r}"
    return "no difference after normalisation"
