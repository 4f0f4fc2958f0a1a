"""Order-insensitive comparison of Arrow tables for the corpus checks.

Values are compared exactly: integers and decimals as Python ints and ``Decimal``s (so
2**63-1 differs from 2**63-2, and 1.000001 from 1.000004), timestamps as instants, floats
within ``FLOAT_RELATIVE_TOLERANCE`` (NaN equals NaN). Column types are compared too, up to
the representation choices listed in :func:`representation`, which another reader or an
expected file may make differently from deltaport without changing a value.
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from typing import Any

import pyarrow as pa

FLOAT_RELATIVE_TOLERANCE = 1e-12
"""Floats are stored as the same IEEE values by every writer here; the tolerance only
absorbs a float32 widened through another library, never a different value."""


def representation(arrow_type: pa.DataType) -> pa.DataType:
    """The type with the tolerated representation choices undone: dictionary encoding;
    ``string`` / ``large_string`` / ``string_view`` (and the binary and list equivalents);
    list element and map entry field names and nullability; the order of a variant's two
    binary fields (the parquet files hold ``value, metadata``, deltalake gives
    ``metadata, value``); a timestamp's unit (Spark's expected files hold INT96 /
    nanoseconds where Delta has microseconds) and the spelling of UTC. Widths of
    integers and floats, decimal precision and scale, and whether a timestamp has a zone
    are not representation choices (see ``same_rows``'s ``zone_free_expected``)."""
    t = arrow_type
    if pa.types.is_dictionary(t):
        return representation(t.value_type)
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return pa.binary()
    if pa.types.is_map(t):
        return pa.map_(representation(t.key_type), representation(t.item_type))
    if (
        pa.types.is_list(t)
        or pa.types.is_large_list(t)
        or pa.types.is_list_view(t)
        or pa.types.is_large_list_view(t)
    ):
        return pa.list_(representation(t.value_type))
    if pa.types.is_struct(t):
        fields = [pa.field(f.name, representation(f.type)) for f in t]
        if sorted(f.name for f in fields) == ["metadata", "value"]:  # a variant
            fields.sort(key=lambda f: f.name)
        return pa.struct(fields)
    if pa.types.is_timestamp(t):
        zone = "UTC" if t.tz in ("UTC", "+00:00", "Etc/UTC", "Z") else t.tz
        return pa.timestamp("us", zone)
    return t


def _zoned(arrow_type: pa.DataType) -> pa.DataType:
    if pa.types.is_timestamp(arrow_type) and arrow_type.tz is None:
        return pa.timestamp("us", "UTC")
    return arrow_type


def type_differences(
    expected: pa.Table, got: pa.Table, columns: list[str], *, zone_free_expected: bool = False
) -> list[str]:
    """The columns whose types differ beyond a representation choice, described.

    ``zone_free_expected``: the expected file stores Delta ``timestamp`` (an instant) as a
    timestamp without a zone (Spark's INT96); its values are read as UTC instants. Only
    top-level columns are concerned."""
    out = []
    for c in columns:
        want, have = expected.schema.field(c).type, got.schema.field(c).type
        if zone_free_expected:
            want = _zoned(want)
        if representation(want) != representation(have):
            out.append(f"{c}: expected {want}, read {have}")
    return out


def normalise_value(value: Any) -> Any:
    """A comparable, exact form: datetimes -> naive UTC ISO text, ints and Decimals kept
    as they are, floats tagged (NaN kept), maps (lists of pairs) -> sorted tuples,
    structs -> sorted items."""
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return ("ts", value.isoformat())
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, float):
        return ("nan",) if math.isnan(value) else ("float", value)
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, Decimal):
        return ("decimal", value)
    if isinstance(value, dict):
        return ("struct", tuple(sorted((k, normalise_value(v)) for k, v in value.items())))
    if isinstance(value, list):
        items = [normalise_value(v) for v in value]
        if value and all(isinstance(v, tuple) and len(v) == 2 for v in value):
            return ("map", tuple(sorted(items, key=_order)))
        return ("list", tuple(items))
    if isinstance(value, tuple):
        return tuple(normalise_value(v) for v in value)
    return value


def _order(value: Any) -> str:
    """A sort key in which floats within the tolerance almost always land together (a
    split pair fails the comparison; it never makes unequal rows pass)."""
    if isinstance(value, tuple):
        if len(value) == 2 and value[0] == "float":
            return f"('float', {value[1]:.9g})"
        if len(value) == 2 and value[0] == "decimal":
            return f"('decimal', {value[1].normalize()!r})"
        return "(" + ", ".join(_order(v) for v in value) + ")"
    return repr(value)


def equal_values(a: Any, b: Any) -> bool:
    """Normalised values equal: exactly, except floats within the stated tolerance."""
    if isinstance(a, tuple) and isinstance(b, tuple):
        if len(a) == 2 and a[0] == "float" and b[0] == "float":
            return math.isclose(a[1], b[1], rel_tol=FLOAT_RELATIVE_TOLERANCE, abs_tol=0.0)
        return len(a) == len(b) and all(equal_values(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b) and type(a) is type(b)


def normalised_rows(table: pa.Table, columns: list[str]) -> list[tuple[Any, ...]]:
    """Rows of ``columns`` normalised and sorted."""
    data = [table.column(c).to_pylist() for c in columns]
    rows = [tuple(normalise_value(col[i]) for col in data) for i in range(table.num_rows)]
    return sorted(rows, key=_order)


def same_rows(
    expected: pa.Table, got: pa.Table, columns: list[str], *, zone_free_expected: bool = False
) -> bool:
    """True when both tables hold the same rows of ``columns`` in any order, with the
    same column types up to :func:`representation` (and ``zone_free_expected``, see
    :func:`type_differences`).

    Flat tables are first compared in Arrow (expected cast to deltaport's types, which
    after the type check only undoes representation choices, then sorted); otherwise
    (nested columns, NaNs) row by row in Python.
    """
    if expected.num_rows != got.num_rows:
        return False
    if type_differences(expected, got, columns, zone_free_expected=zone_free_expected):
        return False
    got = got.select(columns)
    expected = expected.select(columns)
    if not any(pa.types.is_nested(f.type) for f in got.schema):
        try:
            expected = expected.cast(got.schema)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass
        else:
            keys = [(c, "ascending") for c in columns]
            if expected.sort_by(keys).equals(got.sort_by(keys)):
                return True
    e, g = normalised_rows(expected, columns), normalised_rows(got, columns)
    return all(equal_values(a, b) for a, b in zip(e, g, strict=True))


def first_difference(
    expected: pa.Table, got: pa.Table, columns: list[str], *, zone_free_expected: bool = False
) -> str:
    """A short description of the first difference (for assertion messages)."""
    if types := type_differences(expected, got, columns, zone_free_expected=zone_free_expected):
        return "types differ: " + "; ".join(types)
    e = normalised_rows(expected, columns)
    g = normalised_rows(got, columns)
    if len(e) != len(g):
        return f"{len(e)} expected rows, {len(g)} read"
    for a, b in zip(e, g, strict=True):
        if not equal_values(a, b):
            return f"expected {a!r}\n    read {b!r}"
    return "no difference"
