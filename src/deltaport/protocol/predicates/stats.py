"""Per-file statistics (the add action's ``stats`` JSON) as Arrow columns.

The JSON of all files is parsed in one go by Arrow's JSON reader, with an explicit schema
holding only the referenced columns. When a file's stats do not fit that schema (a value
of another type, malformed JSON), the files are parsed one by one instead, and only the
values that do not fit become null (unknown).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import msgspec
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

Path = tuple[str, ...]

_NUM_RECORDS = "numRecords"
_MIN = "minValues"
_MAX = "maxValues"
_NULL_COUNT = "nullCount"


@dataclass(frozen=True)
class ColumnStats:
    min: pa.Array
    max: pa.Array
    null_count: pa.Array


class FileStats:
    """``numRecords`` and, for each requested column path, min, max and null count.

    ``leaf_types`` maps a column's path in the stats (``("a", "b")`` for ``a.b``) to the
    Arrow type its min/max values are read as, or ``None`` to read only its null count.
    """

    def __init__(self, stats: pa.Array, leaf_types: Mapping[Path, pa.DataType | None]) -> None:
        self._length = len(stats)
        self._leaf_types = _consistent(leaf_types)
        table = _read(stats, _schema(self._leaf_types))
        self.num_records: pa.Array = table.column(_NUM_RECORDS).combine_chunks()
        self._table = table

    def column(self, path: Path) -> ColumnStats:
        if path not in self._leaf_types:
            nulls = pa.nulls(self._length, pa.int64())
            return ColumnStats(nulls, nulls, nulls)
        leaf = self._leaf_types[path]
        if leaf is None:
            nulls = pa.nulls(self._length)
            return ColumnStats(nulls, nulls, self._field(_NULL_COUNT, path))
        return ColumnStats(
            self._field(_MIN, path), self._field(_MAX, path), self._field(_NULL_COUNT, path)
        )

    def _field(self, group: str, path: Path) -> pa.Array:
        array: pa.Array = self._table.column(group).combine_chunks()
        for name in path:
            array = pc.struct_field(array, name)
        return array


def _consistent(leaf_types: Mapping[Path, pa.DataType | None]) -> dict[Path, pa.DataType | None]:
    """Drop paths that are a prefix of another path (a column cannot be both a leaf and a
    struct); those columns stay unknown."""
    paths = set(leaf_types)
    return {
        path: leaf
        for path, leaf in leaf_types.items()
        if not any(other[: len(path)] == path and other != path for other in paths)
    }


def _struct_type(leaves: Iterable[tuple[Path, pa.DataType]]) -> pa.StructType:
    tree: dict[str, Any] = {}
    for path, leaf in leaves:
        node = tree
        for name in path[:-1]:
            node = node.setdefault(name, {})
        node[path[-1]] = leaf
    return _to_struct(tree)


def _to_struct(tree: Mapping[str, Any]) -> pa.StructType:
    return pa.struct(
        [
            pa.field(name, _to_struct(value) if isinstance(value, dict) else value)
            for name, value in tree.items()
        ]
    )


def _schema(leaf_types: Mapping[Path, pa.DataType | None]) -> pa.Schema:
    value_leaves = [(p, t) for p, t in leaf_types.items() if t is not None]
    count_leaves = [(p, pa.int64()) for p in leaf_types]
    return pa.schema(
        [
            pa.field(_NUM_RECORDS, pa.int64()),
            pa.field(_MIN, _struct_type(value_leaves)),
            pa.field(_MAX, _struct_type(value_leaves)),
            pa.field(_NULL_COUNT, _struct_type(count_leaves)),
        ]
    )


_SMALLEST_BATCH = 64


def _read(stats: pa.Array, schema: pa.Schema) -> pa.Table:
    """Read with Arrow; a batch that fails is split in halves, down to small batches that
    are read one file at a time."""
    try:
        return _read_all(stats, schema)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError):
        if len(stats) <= _SMALLEST_BATCH:
            return _read_each(stats, schema)
    half = len(stats) // 2
    return pa.concat_tables([_read(stats[:half], schema), _read(stats[half:], schema)])


def _read_all(stats: pa.Array, schema: pa.Schema) -> pa.Table:
    texts = stats.cast(pa.large_string())
    texts = pc.if_else(pc.equal(texts, ""), pa.scalar(None, pa.large_string()), texts)
    texts = pc.fill_null(texts, "{}")
    if pc.any(pc.match_substring(texts, "\n")).as_py():
        raise ValueError("multi-line stats")
    lines = pa.LargeListArray.from_arrays(pa.array([0, len(texts)], pa.int64()), texts)
    data = pc.binary_join(lines, pa.scalar("\n", pa.large_string()))[0].as_buffer()
    longest = pc.max(pc.utf8_length(texts)).as_py() or 0
    table = pa_json.read_json(
        pa.BufferReader(data),
        read_options=pa_json.ReadOptions(block_size=max(1 << 20, 4 * longest + 4)),
        parse_options=pa_json.ParseOptions(
            explicit_schema=schema, unexpected_field_behavior="ignore"
        ),
    )
    if table.num_rows != len(texts):
        raise ValueError("stats are not one JSON object per file")
    return table


_DECODER = msgspec.json.Decoder(float_hook=Decimal)


def _read_each(stats: pa.Array, schema: pa.Schema) -> pa.Table:
    rows = []
    for text in stats.to_pylist():
        try:
            obj = _DECODER.decode(text) if text else {}
        except msgspec.DecodeError:
            obj = {}
        rows.append(obj if isinstance(obj, dict) else {})
    columns = []
    for field in schema:
        if field.name == _NUM_RECORDS:
            values = [_fit(row.get(_NUM_RECORDS), pa.int64()) for row in rows]
            columns.append(pa.array(values, pa.int64()))
        else:
            columns.append(
                pa.array([_fit(row.get(field.name), field.type) for row in rows], field.type)
            )
    return pa.Table.from_arrays(columns, schema=schema)


def _fit(value: object, arrow_type: pa.DataType) -> object:
    """``value`` if it is a valid value of ``arrow_type`` (recursively for structs), else
    ``None``."""
    if value is None:
        return None
    if pa.types.is_struct(arrow_type):
        if not isinstance(value, dict):
            return None
        return {f.name: _fit(value.get(f.name), f.type) for f in arrow_type}
    if pa.types.is_boolean(arrow_type):
        return value if isinstance(value, bool) else None
    if isinstance(value, bool):
        return None
    if pa.types.is_string(arrow_type):
        return value if isinstance(value, str) else None
    if pa.types.is_integer(arrow_type):
        return value if isinstance(value, int) and -(2**63) <= value < 2**63 else None
    if pa.types.is_floating(arrow_type):
        return float(value) if isinstance(value, int | Decimal) else None
    if pa.types.is_decimal(arrow_type) and isinstance(value, int | Decimal):
        try:
            return pa.scalar(Decimal(value), arrow_type).as_py()
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            return None
    return None
