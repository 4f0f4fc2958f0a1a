"""Comparison domains: where a column (of a Delta type) meets a literal.

A comparison is evaluated in one typed domain (integers, floats, decimals, strings,
dates, timestamps, booleans), never lexicographically on the raw text of partition
values or stats. :func:`resolve_domain` picks the domain from the column's Delta type
and the literal, and converts the literal into it; ``None`` means the pair cannot be
compared safely, so the comparison's outcome is unknown.
"""

from __future__ import annotations

import datetime as dt
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, TypeAlias
from typing import Literal as TypingLiteral

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from deltaport.protocol.predicates.tree import Column, ComparisonOp, Literal, LiteralValue
from deltaport.protocol.predicates.values import parse_date, parse_timestamp

Kind: TypeAlias = TypingLiteral[
    "int", "float", "decimal", "string", "date", "timestamp", "timestamp_ntz", "bool"
]

_INTEGER_TYPES = {"byte", "short", "integer", "long"}
_DECIMAL = re.compile(r"decimal\((\d+),\s*(\d+)\)")
_INTEGER_TEXT = re.compile(r"\s*[+-]?\d+\s*")
_NUMBER_TEXT = re.compile(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*")
_NUMERIC_VALUE_TYPES = {"int", "long", "float", "double"}
_VALUE_TYPE_KINDS: dict[str, set[str]] = {
    "bool": {"bool"},
    "string": {"string"},
    "date": {"date"},
    "timestamp": {"timestamp", "timestamp_ntz"},
}


@dataclass(frozen=True)
class Domain:
    kind: Kind
    arrow_type: pa.DataType
    single_precision: bool = False
    """The column is a Delta ``float``: its stats are float32 values printed in decimal."""


def domain_of_type(type_name: str) -> Domain | None:
    """The natural domain of a Delta primitive type name, ``None`` for other types."""
    name = type_name.strip().lower()
    if name in _INTEGER_TYPES:
        return Domain("int", pa.int64())
    if name in ("float", "double"):
        return Domain("float", pa.float64(), single_precision=name == "float")
    if name == "string":
        return Domain("string", pa.string())
    if name == "date":
        return Domain("date", pa.date32())
    if name == "timestamp":
        return Domain("timestamp", pa.timestamp("us", "UTC"))
    if name == "timestamp_ntz":
        return Domain("timestamp_ntz", pa.timestamp("us"))
    if name == "boolean":
        return Domain("bool", pa.bool_())
    match = _DECIMAL.fullmatch(name)
    if match:
        precision, scale = int(match.group(1)), int(match.group(2))
        if precision > 38:
            return Domain("decimal", pa.decimal256(precision, scale))
        return Domain("decimal", pa.decimal128(precision, scale))
    return None


def delta_type_of_arrow(arrow_type: pa.DataType) -> str | None:
    """The Delta type name of an Arrow type, for evaluating predicates on data rows."""
    if pa.types.is_dictionary(arrow_type):
        return delta_type_of_arrow(arrow_type.value_type)
    names = {
        pa.int8(): "byte",
        pa.int16(): "short",
        pa.int32(): "integer",
        pa.int64(): "long",
        pa.float32(): "float",
        pa.float64(): "double",
        pa.string(): "string",
        pa.large_string(): "string",
        pa.string_view(): "string",
        pa.date32(): "date",
        pa.bool_(): "boolean",
    }
    if arrow_type in names:
        return names[arrow_type]
    if pa.types.is_timestamp(arrow_type):
        return "timestamp" if arrow_type.tz is not None else "timestamp_ntz"
    if pa.types.is_decimal(arrow_type):
        return f"decimal({arrow_type.precision},{arrow_type.scale})"
    return None


def resolve_domain(type_name: str, column: Column, literal: Literal) -> tuple[Domain, pa.Scalar]:
    """The domain to compare ``column`` (of Delta type ``type_name``) with ``literal`` in,
    and the literal as a scalar of it. Raises ``ValueError`` when they are incomparable."""
    domain = domain_of_type(type_name)
    if domain is None:
        raise ValueError(f"unsupported column type {type_name}")
    if column.value_type is not None and not _value_type_fits(column.value_type, domain):
        raise ValueError(f"column of type {type_name} compared as {column.value_type}")
    if domain.kind == "int" and _is_fractional(literal):
        domain = Domain("float", pa.float64())
    value = _convert_literal(literal, domain)
    if domain.kind == "decimal":
        return domain, pa.scalar(value)  # its own precision and scale: compared exactly
    return domain, pa.scalar(value, domain.arrow_type)


def _value_type_fits(value_type: str, domain: Domain) -> bool:
    if value_type in _NUMERIC_VALUE_TYPES:
        return domain.kind in ("int", "float", "decimal")
    return domain.kind in _VALUE_TYPE_KINDS[value_type]


def _is_fractional(literal: Literal) -> bool:
    if isinstance(literal.value, Decimal):
        return True
    return isinstance(literal.value, str) and _INTEGER_TEXT.fullmatch(literal.value) is None


def _convert_literal(literal: Literal, domain: Domain) -> object:
    value: LiteralValue = literal.value
    if isinstance(value, str) and domain.kind != "string":
        if literal.value_type != "string":
            raise ValueError("not a number")
        return parse_text(value, domain)
    match domain.kind:
        case "int" if isinstance(value, int) and not isinstance(value, bool):
            return value
        case "float" if isinstance(value, int | Decimal) and not isinstance(value, bool):
            number = float(value)
            return float(np.float32(number)) if literal.value_type == "float" else number
        case "decimal" if isinstance(value, int | Decimal) and not isinstance(value, bool):
            if literal.value_type == "float":
                raise ValueError("a float literal does not compare exactly with decimals")
            return Decimal(value)
        case "string" if isinstance(value, str) and literal.value_type == "string":
            return value
        case "date" if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
            return value
        case "timestamp" if isinstance(value, dt.datetime):
            return value.astimezone(dt.UTC)
        case "bool" if isinstance(value, bool):
            return value
    raise ValueError(f"a {literal.value_type} literal does not compare with {domain.kind}")


def parse_text(text: str, domain: Domain) -> object:
    """Parse one textual value (partition value, SQL string literal) into ``domain``."""
    match domain.kind:
        case "int":
            if not _INTEGER_TEXT.fullmatch(text):
                raise ValueError(f"not an integer: {text!r}")
            return int(text)
        case "float":
            if text.strip().lower() in ("nan", "+nan", "-nan"):
                raise ValueError("NaN is not comparable")
            return float(text)
        case "decimal":
            if not _NUMBER_TEXT.fullmatch(text):
                raise ValueError(f"not a number: {text!r}")
            try:
                return Decimal(text.strip())
            except InvalidOperation as exc:
                raise ValueError(str(exc)) from None
        case "string":
            return text
        case "date":
            return parse_date(text)
        case "timestamp":
            value = parse_timestamp(text)
            return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value
        case "timestamp_ntz":
            value = parse_timestamp(text)
            if value.tzinfo is not None:
                raise ValueError("timestamp_ntz values have no zone offset")
            return value
        case "bool":
            if text.strip().lower() not in ("true", "false"):
                raise ValueError(f"not a boolean: {text!r}")
            return text.strip().lower() == "true"


def strings_to_domain(strings: pa.Array, domain: Domain) -> pa.Array:
    """Convert text values into ``domain``; values that do not parse become null."""
    if domain.kind == "string":
        return strings.cast(pa.string())
    try:
        return pc.cast(strings, domain.arrow_type)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    if domain.kind == "timestamp":
        try:  # all without an offset: UTC, as Delta writes timestamp partition values
            return pc.cast(pc.cast(strings, pa.timestamp("us")), domain.arrow_type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass
    values = []
    for text in strings.to_pylist():
        try:
            values.append(None if text is None else parse_text(text, domain))
        except ValueError:
            values.append(None)
    return _array_or_nulls(values, domain.arrow_type)


def _array_or_nulls(values: list[object], arrow_type: pa.DataType) -> pa.Array:
    try:
        return pa.array(values, arrow_type)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        out = []
        for value in values:
            try:
                out.append(pa.scalar(value, arrow_type).as_py())
            except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
                out.append(None)
        return pa.array(out, arrow_type)


_PYTHON_COMPARE: dict[ComparisonOp, Callable[[Any, Any], bool]] = {
    "equal": operator.eq,
    "lessThan": operator.lt,
    "lessThanOrEqual": operator.le,
    "greaterThan": operator.gt,
    "greaterThanOrEqual": operator.ge,
}


def compare_literals(op: ComparisonOp, left: Literal, right: Literal) -> bool:
    """Compare two constants; ``ValueError`` when their types do not compare."""
    a, b = left.value, right.value
    if isinstance(a, bool) != isinstance(b, bool) or isinstance(a, dt.datetime) != isinstance(
        b, dt.datetime
    ):
        raise ValueError(f"cannot compare {left.value_type} with {right.value_type}")
    try:
        return _PYTHON_COMPARE[op](a, b)
    except TypeError:
        raise ValueError(f"cannot compare {left.value_type} with {right.value_type}") from None
