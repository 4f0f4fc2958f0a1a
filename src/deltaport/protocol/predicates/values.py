"""Literal values as text (the JSON format's ``value``) <-> typed Python values."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

from deltaport.protocol.predicates.errors import PredicateError
from deltaport.protocol.predicates.tree import LiteralValue, ValueType

_INTEGER = re.compile(r"[+-]?\d+")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_DATE = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})")
_RANGES = {"int": (-(2**31), 2**31 - 1), "long": (-(2**63), 2**63 - 1)}


def parse_value(text: str, value_type: ValueType) -> LiteralValue:
    """Parse a literal's text as ``value_type``; :class:`PredicateError` if it does not."""
    try:
        return _parse(text, value_type)
    except ValueError as exc:
        raise PredicateError(f"cannot parse {text!r} as {value_type}: {exc}") from None


def _parse(text: str, value_type: ValueType) -> LiteralValue:
    match value_type:
        case "bool":
            if text.lower() not in ("true", "false"):
                raise ValueError("expected true or false")
            return text.lower() == "true"
        case "int" | "long":
            if not _INTEGER.fullmatch(text):
                raise ValueError("not an integer")
            value = int(text)
            low, high = _RANGES[value_type]
            if not low <= value <= high:
                raise ValueError(f"out of range [{low}, {high}]")
            return value
        case "float" | "double":
            if not _NUMBER.fullmatch(text):
                raise ValueError("not a finite number")
            return Decimal(text)
        case "string":
            return text
        case "date":
            return parse_date(text)
        case "timestamp":
            value_ts = parse_timestamp(text)
            if value_ts.tzinfo is None:
                raise ValueError("a zone offset is required, e.g. 2021-01-01T00:00:00Z")
            return value_ts


def parse_date(text: str) -> dt.date:
    match = _DATE.fullmatch(text.strip())
    if match is None:
        raise ValueError("expected yyyy-mm-dd")
    year, month, day = (int(g) for g in match.groups())
    return dt.date(year, month, day)


def parse_timestamp(text: str) -> dt.datetime:
    """ISO 8601 date-time with ``T`` or space, or a date (midnight); naive when no offset
    is given."""
    text = text.strip()
    if _DATE.fullmatch(text):
        return dt.datetime.combine(parse_date(text), dt.time())
    if len(text) < 11 or text[10] not in "T ":
        raise ValueError("expected yyyy-mm-ddThh:mm:ss[.ffffff][offset]")
    return dt.datetime.fromisoformat(text)


def format_value(value: LiteralValue) -> str:
    """The JSON format's text for a literal value."""
    match value:
        case bool():
            return "true" if value else "false"
        case dt.datetime():
            return value.isoformat()
        case dt.date():
            return value.isoformat()
        case _:
            return str(value)
