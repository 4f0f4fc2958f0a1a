"""Spark's pushed filters -> a Delta Sharing JSON predicate (``jsonPredicateHints``).

The predicate is only a hint for the server to skip files: Spark still evaluates every
filter on the rows, so a filter that cannot be expressed is simply left out of the hint.
Only comparisons of top-level or nested columns of types the JSON format knows are kept.
A ``startsWith`` on a string column becomes the range of strings with that prefix
(``>= prefix AND < the prefix with its last character incremented``), and ``<=>`` an
``equal`` (or ``isNull`` against NULL).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from decimal import Decimal

import pyarrow as pa
from pyspark.sql import datasource as ds

from deltaport.protocol.predicates import (
    And,
    Column,
    Comparison,
    ComparisonOp,
    Expr,
    IsNull,
    Literal,
    Not,
    Or,
    ValueType,
    predicate_to_json,
)
from deltaport.protocol.predicates.domains import delta_type_of_arrow

MAX_IN_VALUES = 100
"""Longer ``IN`` lists are not sent as hints (the hint would cost more than it saves)."""

_COMPARISONS: dict[type[ds.Filter], ComparisonOp] = {
    ds.EqualTo: "equal",
    ds.EqualNullSafe: "equal",
    ds.GreaterThan: "greaterThan",
    ds.GreaterThanOrEqual: "greaterThanOrEqual",
    ds.LessThan: "lessThan",
    ds.LessThanOrEqual: "lessThanOrEqual",
}


def filters_to_json(filters: Sequence[ds.Filter], schema: pa.Schema) -> str | None:
    """The JSON predicate of the filters that can be expressed (ANDed), or ``None``."""
    parts = [e for e in (filter_to_expr(f, schema) for f in filters) if e is not None]
    if not parts:
        return None
    expr = parts[0] if len(parts) == 1 else And(tuple(parts))
    return json.dumps(predicate_to_json(expr), separators=(",", ":"))


def filter_to_expr(f: ds.Filter, schema: pa.Schema) -> Expr | None:
    """One Spark filter as a predicate tree, or ``None`` when it cannot be a hint."""
    if isinstance(f, ds.Not):
        inner = filter_to_expr(f.child, schema)
        return None if inner is None else Not(inner)
    column = _column(getattr(f, "attribute", ()), schema)
    if column is None:
        return None
    if isinstance(f, ds.IsNull):
        return IsNull(column)
    if isinstance(f, ds.IsNotNull):
        return Not(IsNull(column))
    assert column.value_type is not None
    if isinstance(f, ds.StringStartsWith):
        return _prefix_range(column, f.value)
    if isinstance(f, ds.EqualNullSafe) and f.value is None:
        return IsNull(column)
    if isinstance(f, ds.In):
        values = [_literal(v, column.value_type) for v in f.value]
        if not values or len(values) > MAX_IN_VALUES or any(v is None for v in values):
            return None
        equals = [Comparison("equal", column, v) for v in values if v is not None]
        return equals[0] if len(equals) == 1 else Or(tuple(equals))
    op = _COMPARISONS.get(type(f))
    if op is None:
        return None
    literal = _literal(getattr(f, "value", None), column.value_type)
    return None if literal is None else Comparison(op, column, literal)


def _prefix_range(column: Column, prefix: object) -> Expr | None:
    """The strings that start with ``prefix``, as a range (None: no useful hint)."""
    if column.value_type != "string" or not isinstance(prefix, str) or not prefix:
        return None
    lower = Comparison("greaterThanOrEqual", column, Literal(prefix, "string"))
    upper = _successor(prefix)
    if upper is None:
        return lower
    return And((lower, Comparison("lessThan", column, Literal(upper, "string"))))


def _successor(prefix: str) -> str | None:
    """The least string above every string starting with ``prefix`` (code point order,
    which is UTF-8 byte order); None when there is none (every character is the last)."""
    chars = list(prefix)
    while chars:
        code = ord(chars[-1]) + 1
        if 0xD800 <= code <= 0xDFFF:  # surrogates are not characters
            code = 0xE000
        if code <= 0x10FFFF:
            chars[-1] = chr(code)
            return "".join(chars)
        chars.pop()
    return None


def _column(path: tuple[str, ...], schema: pa.Schema) -> Column | None:
    fields: pa.Schema | pa.StructType | None = schema
    arrow_type: pa.DataType | None = None
    for name in path:
        index = -1 if fields is None else fields.get_field_index(name)
        if fields is None or index < 0:
            return None
        arrow_type = fields.field(index).type
        fields = arrow_type if pa.types.is_struct(arrow_type) else None
    value_type = None if arrow_type is None else _value_type(arrow_type)
    return None if value_type is None else Column(".".join(path), value_type)


_VALUE_TYPES: dict[str, ValueType] = {
    "boolean": "bool",
    "byte": "int",
    "short": "int",
    "integer": "int",
    "long": "long",
    "string": "string",
    "date": "date",
    "float": "float",
    "double": "double",
    "timestamp": "timestamp",
}
"""JSON predicate value types of the Delta types a hint can compare (others: none)."""


def _value_type(arrow_type: pa.DataType) -> ValueType | None:
    delta_type = delta_type_of_arrow(arrow_type)
    return None if delta_type is None else _VALUE_TYPES.get(delta_type)


def _literal(value: object, value_type: ValueType) -> Literal | None:
    """The literal of a Spark filter value for a column of ``value_type``; ``None`` when
    its meaning could be ambiguous (a timestamp without zone, a NaN)."""
    match value_type, value:
        case "bool", bool():
            return Literal(value, "bool")
        case (("int" | "long"), int()) if not isinstance(value, bool):
            return Literal(value, value_type)
        case (("float" | "double"), (int() | float())) if not isinstance(value, bool):
            number = float(value)
            if number != number or number in (float("inf"), float("-inf")):
                return None
            return Literal(Decimal(repr(number)), value_type)
        case "string", str():
            return Literal(value, "string")
        case "date", dt.date() if not isinstance(value, dt.datetime):
            return Literal(value, "date")
        case "timestamp", dt.datetime() if value.tzinfo is not None:
            return Literal(value, "timestamp")
    return None
