"""Delta file statistics as Iceberg column metrics: value and null counts and lower and
upper bounds in Iceberg's single-value binary encoding, by field id.

A bound is only ever widened, never narrowed, so that no reader prunes a file holding a
matching row: Delta writes timestamps to the millisecond (the upper bound becomes the last
microsecond of that millisecond) and cuts long strings to a prefix (a prefix is a valid
lower bound, but not an upper one, so a string upper bound that may have been cut is left
out). Files whose statistics are not tight (``tightBounds: false``, after deletion vectors)
keep their bounds and lose their null counts.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal, InvalidOperation

from deltaport.iceberg.convert.schema import IcebergSchema
from deltaport.iceberg.model.metadata import IcebergType, ListType, NestedField, StructType

STRING_PREFIX_LENGTH = 32
"""Delta's default length of string statistics (``dataSkippingStringPrefixLength``): a
maximum this long or longer may have been cut."""

_EPOCH = date(1970, 1, 1)


@dataclass(frozen=True)
class StatsColumn:
    """A primitive column with statistics: its id, Iceberg type, the path of physical names
    Delta's stats use, and whether it sits inside a list or map (then it has no value count
    per row)."""

    field_id: int
    iceberg_type: str
    path: tuple[str, ...]
    repeated: bool


@dataclass
class FileMetrics:
    value_counts: dict[int, int]
    null_counts: dict[int, int]
    lower_bounds: dict[int, bytes]
    upper_bounds: dict[int, bytes]


def stats_columns(schema: IcebergSchema) -> list[StatsColumn]:
    """Every primitive column of ``schema`` with the path its statistics are found at."""
    out: list[StatsColumn] = []
    physical_by_id = {schema.ids[k]: v for k, v in schema.physical.items()}

    def walk(fields: list[NestedField], repeated: bool) -> None:
        for f in fields:
            _column(f.id, f.type, repeated)

    def _column(field_id: int, kind: IcebergType, repeated: bool) -> None:
        if isinstance(kind, str):
            path = physical_by_id.get(field_id)
            if path is not None:
                out.append(StatsColumn(field_id, kind, tuple(path.split(".")), repeated))
        elif isinstance(kind, StructType):
            walk(kind.fields, repeated)
        elif isinstance(kind, ListType):
            _column(kind.element_id, kind.element, True)
        else:
            _column(kind.key_id, kind.key, True)
            _column(kind.value_id, kind.value, True)

    walk(schema.schema.fields, False)
    return out


def file_metrics(stats_json: str | None, columns: list[StatsColumn]) -> tuple[int, FileMetrics]:
    """The record count and metrics of one file from its Delta ``stats``; a file without
    statistics has a record count of -1 (unknown) and no metrics."""
    metrics = FileMetrics({}, {}, {}, {})
    if not stats_json:
        return -1, metrics
    stats = json.loads(stats_json, parse_float=Decimal)
    records = stats.get("numRecords")
    if not isinstance(records, int):
        return -1, metrics
    tight = stats.get("tightBounds", True) is not False
    minimums, maximums = stats.get("minValues") or {}, stats.get("maxValues") or {}
    nulls = stats.get("nullCount") or {}
    for column in columns:
        if not column.repeated:
            metrics.value_counts[column.field_id] = records
        null_count = _at(nulls, column.path)
        if tight and isinstance(null_count, int) and not column.repeated:
            metrics.null_counts[column.field_id] = null_count
        lower = _encode(column.iceberg_type, _at(minimums, column.path), upper=False)
        if lower is not None:
            metrics.lower_bounds[column.field_id] = lower
        upper = _encode(column.iceberg_type, _at(maximums, column.path), upper=True)
        if upper is not None:
            metrics.upper_bounds[column.field_id] = upper
    return records, metrics


Statistic = str | int | float | Decimal
"""A value of Delta's stats JSON that can be a bound (its numbers decoded as decimals)."""


def _at(values: Mapping[str, object], path: tuple[str, ...]) -> object:
    found: object = values
    for part in path:
        if not isinstance(found, Mapping):
            return None
        found = found.get(part)
    return found


def _encode(kind: str, value: object, *, upper: bool) -> bytes | None:
    """``value`` from Delta's stats as an Iceberg bound, widened; None when it cannot be
    a safe bound."""
    if not isinstance(value, Statistic):
        return None
    try:
        return _encoded(kind, value, upper)
    except (ValueError, TypeError, InvalidOperation, OverflowError, struct.error):
        return None


def _encoded(kind: str, value: Statistic, upper: bool) -> bytes | None:
    if kind == "boolean":
        return b"\x01" if value is True else b"\x00" if value is False else None
    if kind == "int":
        return struct.pack("<i", _integer(value))
    if kind == "long":
        return struct.pack("<q", _integer(value))
    if kind in ("float", "double"):
        number = float(value)
        if math.isnan(number):
            return None
        return struct.pack("<f" if kind == "float" else "<d", _widen_float(number, kind, upper))
    if kind == "date":
        return struct.pack("<i", (date.fromisoformat(str(value)) - _EPOCH).days)
    if kind in ("timestamp", "timestamptz"):
        micros = _micros(str(value), zoned=kind == "timestamptz")
        return struct.pack("<q", micros + 999 if upper else micros)
    if kind == "string":
        text = str(value)
        if upper and (len(text) >= STRING_PREFIX_LENGTH or text.endswith(("\ufffd", "\uffff"))):
            return None
        return text.encode("utf-8")
    if kind.startswith("decimal("):
        scale = int(kind[kind.index(",") + 1 : -1])
        exact = Decimal(str(value)).quantize(
            Decimal(1).scaleb(-scale), rounding=ROUND_CEILING if upper else ROUND_FLOOR
        )
        unscaled = int(exact.scaleb(scale))
        length = max(1, (unscaled.bit_length() + 8) // 8)
        return unscaled.to_bytes(length, "big", signed=True)
    return None


def _integer(value: Statistic) -> int:
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        raise TypeError(value)
    if isinstance(value, Decimal) and value != value.to_integral_value():
        raise ValueError(value)
    return int(value)


def _widen_float(number: float, kind: str, upper: bool) -> float:
    """A ``float`` statistic was printed in decimal and may have rounded on the way back:
    step one float32 unit outwards. Doubles are printed exactly."""
    if kind == "double":
        return number
    value = float(struct.unpack("<f", struct.pack("<f", number))[0])
    if math.isinf(value):
        return value
    return _f32_step(value, upper)


def _f32_step(value: float, upper: bool) -> float:
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    negative = bits >> 31
    if value == 0.0:
        step = 1 | (0 if upper else 1 << 31)
        return float(struct.unpack("<f", struct.pack("<I", step))[0])
    grows = upper != bool(negative)
    bits = bits + 1 if grows else bits - 1
    return float(struct.unpack("<f", struct.pack("<I", bits))[0])


def _micros(text: str, *, zoned: bool) -> int:
    parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    delta = parsed - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
