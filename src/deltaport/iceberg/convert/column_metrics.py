"""The column metrics of many files at once: all files' Delta statistics parsed together
by Arrow's JSON reader and encoded as Iceberg bounds with Arrow and numpy, column by
column, by the rules of :mod:`deltaport.iceberg.convert.bounds` (which stays the per-file
definition, used for statistics this reader cannot take whole)."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from deltaport.iceberg.avro.binary import concatenated, fixed, ragged
from deltaport.iceberg.convert.bounds import STRING_PREFIX_LENGTH, StatsColumn, file_metrics

Metric = tuple[int, pa.Array]
"""A field id and one value per file, null where the file has none."""


@dataclass(frozen=True)
class MetricColumns:
    """Record counts (-1: unknown) and metrics of files, by field id in column order."""

    records: np.ndarray
    value_counts: list[Metric]
    null_counts: list[Metric]
    lower_bounds: list[Metric]
    upper_bounds: list[Metric]


class _NotColumnar(Exception):
    """Statistics the Arrow reader cannot take whole; read file by file instead."""


def metric_columns(stats: pa.Array, columns: list[StatsColumn]) -> MetricColumns:
    """The metrics of the files whose Delta ``stats`` (JSON strings, null where absent)
    are given."""
    try:
        return _columnar(stats, columns)
    except (_NotColumnar, pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return _file_by_file(stats.to_pylist(), columns)


_ARROW_TYPES: dict[str, pa.DataType] = {
    "boolean": pa.bool_(),
    "int": pa.int64(),
    "long": pa.int64(),
    "float": pa.float64(),
    "double": pa.float64(),
    "date": pa.string(),
    "timestamp": pa.string(),
    "timestamptz": pa.string(),
    "string": pa.string(),
}


def _value_type(kind: str) -> pa.DataType | None:
    if kind.startswith("decimal("):
        precision, scale = (int(x) for x in kind[8:-1].split(","))
        return pa.decimal128(precision, scale) if precision <= 38 else None
    return _ARROW_TYPES.get(kind)


def _struct(leaves: dict[tuple[str, ...], pa.DataType]) -> pa.StructType:
    tree: dict[str, object] = {}
    for path, kind in leaves.items():
        node = tree
        for part in path[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise _NotColumnar(path)
            node = child
        if path[-1] in node:
            raise _NotColumnar(path)
        node[path[-1]] = kind

    def build(node: dict[str, object]) -> pa.StructType:
        return pa.struct([(k, build(v) if isinstance(v, dict) else v) for k, v in node.items()])

    return build(tree)


def _leaf(column: pa.Array, path: tuple[str, ...]) -> pa.Array:
    for part in path:
        column = pc.struct_field(column, part)
    return column


def _columnar(stats: pa.Array, columns: list[StatsColumn]) -> MetricColumns:
    plain = [c for c in columns if not c.repeated]
    bounded = {c.path: t for c in plain if (t := _value_type(c.iceberg_type)) is not None}
    schema = pa.schema(
        [
            ("numRecords", pa.int64()),
            ("tightBounds", pa.bool_()),
            ("nullCount", _struct({c.path: pa.int64() for c in plain})),
            ("minValues", _struct(bounded)),
            ("maxValues", _struct(bounded)),
        ]
    )
    lines = pc.if_else(pc.equal(pc.fill_null(stats, ""), ""), "{}", stats)
    data = concatenated(pc.binary_join_element_wise(lines, "\n", ""))
    table = pj.read_json(
        io.BytesIO(data),
        read_options=pj.ReadOptions(use_threads=False, block_size=max(1 << 20, len(data) + 1)),
        parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore"),
    )
    if table.num_rows != len(stats):
        raise _NotColumnar("a statistic spans lines")
    records = pc.fill_null(table.column("numRecords"), -1).to_numpy()
    known = pa.array(records >= 0)
    tight = pc.and_(known, pc.fill_null(table.column("tightBounds"), True))
    out = MetricColumns(records, [], [], [], [])
    no_count = pa.nulls(len(stats), pa.int64())
    for c in plain:
        out.value_counts.append((c.field_id, pc.if_else(known, pa.array(records), no_count)))
        nulls = _leaf(table.column("nullCount").combine_chunks(), c.path)
        out.null_counts.append((c.field_id, pc.if_else(tight, nulls, no_count)))
    for c in plain:
        if c.path in bounded:
            low = _leaf(table.column("minValues").combine_chunks(), c.path)
            out.lower_bounds.append((c.field_id, _bounds(c.iceberg_type, low, known, False)))
    for c in plain:
        if c.path in bounded:
            high = _leaf(table.column("maxValues").combine_chunks(), c.path)
            out.upper_bounds.append((c.field_id, _bounds(c.iceberg_type, high, known, True)))
    return _without_empty(out)


def _without_empty(out: MetricColumns) -> MetricColumns:
    def keep(metrics: list[Metric]) -> list[Metric]:
        return [(k, v) for k, v in metrics if v.null_count < len(v)]

    return MetricColumns(
        out.records,
        keep(out.value_counts),
        keep(out.null_counts),
        keep(out.lower_bounds),
        keep(out.upper_bounds),
    )


def _bounds(kind: str, values: pa.Array, known: pa.Array, upper: bool) -> pa.Array:
    """Delta's minimum or maximum values as Iceberg bounds, widened; null where a file has
    none or it cannot be a safe bound."""
    valid = pc.and_(known, values.is_valid())
    encode = _ENCODERS.get(kind) or _decimal
    encoded, safe = encode(values, kind, upper)
    return pc.if_else(pc.and_(valid, safe), encoded, pa.scalar(None, pa.binary()))


Encoder = Callable[[pa.Array, str, bool], tuple[pa.Array, pa.Array]]


def _numbers(values: pa.Array, dtype: type) -> np.ndarray:
    return np.asarray(pc.fill_null(values, 0).to_numpy(zero_copy_only=False), dtype=dtype)


def _little(numbers: np.ndarray, dtype: str) -> pa.Array:
    raw = np.ascontiguousarray(numbers.astype(dtype))
    return fixed(raw.view(np.uint8).reshape(len(raw), -1))


def _boolean(values: pa.Array, kind: str, upper: bool) -> tuple[pa.Array, pa.Array]:
    flags = pc.fill_null(values, False).to_numpy(zero_copy_only=False)
    return _little(flags, "u1"), pa.array(np.ones(len(values), bool))


def _int(values: pa.Array, kind: str, upper: bool) -> tuple[pa.Array, pa.Array]:
    numbers = _numbers(values, np.int64)
    if kind == "long":
        return _little(numbers, "<i8"), pa.array(np.ones(len(values), bool))
    fits = (numbers >= -(2**31)) & (numbers < 2**31)
    return _little(np.where(fits, numbers, 0), "<i4"), pa.array(fits)


def _float(values: pa.Array, kind: str, upper: bool) -> tuple[pa.Array, pa.Array]:
    numbers = _numbers(values, np.float64)
    finite = ~np.isnan(numbers)
    if kind == "double":
        return _little(numbers, "<f8"), pa.array(finite)
    with np.errstate(over="ignore", invalid="ignore"):
        single = numbers.astype(np.float32)
    fits = finite & ~(np.isinf(single) & np.isfinite(numbers))
    bits = single.view(np.uint32).astype(np.int64)
    negative = (bits >> 31).astype(bool)
    zero = single == 0
    grows = upper != negative
    stepped = np.where(grows, bits + 1, bits - 1)
    stepped = np.where(zero, 1 if upper else (1 | (1 << 31)), stepped)
    stepped = np.where(np.isinf(single), bits, stepped)
    out = (stepped & 0xFFFFFFFF).astype(np.uint32).view(np.float32)
    return _little(out, "<f4"), pa.array(fits)


def _date(values: pa.Array, kind: str, upper: bool) -> tuple[pa.Array, pa.Array]:
    days = pc.cast(pc.fill_null(values, "1970-01-01"), pa.date32()).cast(pa.int32())
    return _little(days.to_numpy(), "<i4"), pa.array(np.ones(len(values), bool))


def _timestamp(values: pa.Array, kind: str, upper: bool) -> tuple[pa.Array, pa.Array]:
    texts = pc.fill_null(values, "1970-01-01T00:00:00Z")
    try:
        parsed = pc.cast(texts, pa.timestamp("us", "UTC"))
    except pa.ArrowInvalid:
        texts = pc.fill_null(values, "1970-01-01T00:00:00")
        parsed = pc.cast(texts, pa.timestamp("us"))
    micros = parsed.cast(pa.int64()).to_numpy() + (999 if upper else 0)
    return _little(micros, "<i8"), pa.array(np.ones(len(values), bool))


def _string(values: pa.Array, kind: str, upper: bool) -> tuple[pa.Array, pa.Array]:
    texts = pc.fill_null(values, "")
    safe = pa.array(np.ones(len(values), bool))
    if upper:
        cut = pc.or_(
            pc.greater_equal(pc.utf8_length(texts), STRING_PREFIX_LENGTH),
            pc.or_(pc.ends_with(texts, "\ufffd"), pc.ends_with(texts, "\uffff")),
        )
        safe = pc.invert(cut)
    return texts.cast(pa.binary()), safe


def _decimal(values: pa.Array, kind: str, upper: bool) -> tuple[pa.Array, pa.Array]:
    """Unscaled values in their shortest big-endian two's complement (as
    ``int.to_bytes(max(1, (bit_length + 8) // 8))`` makes them)."""
    array = values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values
    words = np.frombuffer(array.buffers()[1], np.int64)[
        2 * array.offset : 2 * (array.offset + len(array))
    ].reshape(-1, 2)
    low, high = words[:, 0], words[:, 1]
    fits = (high == (low >> 63)) & (low != np.iinfo(np.int64).min)
    if not fits[np.asarray(array.is_valid())].all():
        raise _NotColumnar("a decimal beyond 63 bits")
    low = np.where(fits, low, 0)
    magnitude = np.abs(low)
    lengths = np.ones(len(low), np.int64)
    for k in range(1, 8):
        lengths += magnitude >= (1 << (8 * k - 1))
    big = np.ascontiguousarray(low.astype(">i8")).view(np.uint8).reshape(-1, 8)
    shifted = np.take_along_axis(big, (np.arange(8) + (8 - lengths)[:, None]) % 8, axis=1)
    return ragged(shifted, lengths), pa.array(np.ones(len(values), bool))


_ENCODERS: dict[str, Encoder] = {
    "boolean": _boolean,
    "int": _int,
    "long": _int,
    "float": _float,
    "double": _float,
    "date": _date,
    "timestamp": _timestamp,
    "timestamptz": _timestamp,
    "string": _string,
}


def _file_by_file(stats: list[str | None], columns: list[StatsColumn]) -> MetricColumns:
    per_file = [file_metrics(s, columns) for s in stats]
    records = np.array([count for count, _ in per_file], np.int64)

    def gather(pick: Callable[..., dict[int, object]], kind: pa.DataType) -> list[Metric]:
        out = []
        for c in columns:
            values = [pick(m).get(c.field_id) for _, m in per_file]
            if any(v is not None for v in values):
                out.append((c.field_id, pa.array(values, kind)))
        return out

    return MetricColumns(
        records,
        gather(lambda m: m.value_counts, pa.int64()),
        gather(lambda m: m.null_counts, pa.int64()),
        gather(lambda m: m.lower_bounds, pa.binary()),
        gather(lambda m: m.upper_bounds, pa.binary()),
    )
