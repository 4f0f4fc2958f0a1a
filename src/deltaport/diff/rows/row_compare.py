"""Comparing two sets of rows in memory with Arrow: by key, or as multisets of whole rows.

Both produce a change table (``change_schema``): one row per inserted, deleted or
updated row, with the key, the row on each side (null where it does not exist) and the
names of the changed columns. Rows are compared by value with nulls equal to nulls and NaN
equal to NaN, as a reader of the two tables would compare them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import msgspec
import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from deltaport.diff.base.errors import DiffError
from deltaport.text.wording import count

INSERTED = "inserted"
DELETED = "deleted"
UPDATED = "updated"

_LEFT_ROW = "__deltaport_left_row"
_RIGHT_ROW = "__deltaport_right_row"
_IN_LEFT = "__deltaport_in_left"
_IN_RIGHT = "__deltaport_in_right"
_ROW = "__deltaport_row"


def change_schema(schema: pa.Schema, key: Sequence[str]) -> pa.Schema:
    """The change table of rows of ``schema`` compared by ``key`` (none: whole rows)."""
    row = pa.struct(list(schema))
    key_type = pa.struct([schema.field(k) for k in key])
    return pa.schema(
        [
            pa.field("change", pa.string(), nullable=False),
            pa.field("key", key_type),
            pa.field("left", row),
            pa.field("right", row),
            pa.field("changed", pa.list_(pa.string()), nullable=False),
        ]
    )


def compare_by_key(left: pa.Table, right: pa.Table, key: Sequence[str]) -> pa.Table:
    """Rows only in ``right`` (inserted), only in ``left`` (deleted), and on both sides
    with other values (updated, with the changed columns), in key order. Both tables have
    the same schema; the key must be unique on each side."""
    key = list(key)
    for side, table in (("left", left), ("right", right)):
        _check_unique(table, key, side)
    codes = [f"__deltaport_key{i}" for i in range(len(key))]
    left_codes, right_codes = _key_codes(left, right, key, codes)
    matched_rows = left_codes.append_column(_LEFT_ROW, _positions(left.num_rows)).join(
        right_codes.append_column(_RIGHT_ROW, _positions(right.num_rows)),
        keys=codes,
        join_type="full outer",
        use_threads=False,
    )
    lrows = matched_rows.column(_LEFT_ROW).combine_chunks()
    rrows = matched_rows.column(_RIGHT_ROW).combine_chunks()
    keyed = (
        pa.table(
            {k: pc.coalesce(left.column(k).take(lrows), right.column(k).take(rrows)) for k in key}
        )
        .append_column(_LEFT_ROW, lrows)
        .append_column(_RIGHT_ROW, rrows)
    )
    joined = keyed.sort_by([(k, "ascending") for k in key])
    left_rows = joined.column(_LEFT_ROW).combine_chunks()
    right_rows = joined.column(_RIGHT_ROW).combine_chunks()
    both = np.asarray(pc.and_(left_rows.is_valid(), right_rows.is_valid()))
    values = [n for n in left.schema.names if n not in key]
    changed = np.zeros((joined.num_rows, len(values)), dtype=bool)
    matched = np.flatnonzero(both)
    if len(matched):
        lhs = left.take(pc.take(left_rows, matched))
        rhs = right.take(pc.take(right_rows, matched))
        for j, name in enumerate(values):
            changed[matched, j] = differs(lhs.column(name), rhs.column(name))
    kind = np.where(
        np.asarray(left_rows.is_null()), INSERTED, np.where(both, UPDATED, DELETED)
    ).astype(object)
    keep = ~both | changed.any(axis=1)
    rows = np.flatnonzero(keep)
    return _changes(
        left,
        right,
        key,
        kind[rows],
        joined.select(key).take(rows),
        pc.take(left_rows, rows),
        pc.take(right_rows, rows),
        _changed_lists(changed[rows], values),
    )


def _key_codes(
    left: pa.Table, right: pa.Table, key: Sequence[str], names: Sequence[str]
) -> tuple[pa.Table, pa.Table]:
    """Each key column as integer codes shared by both sides, null a code of its own: an
    Arrow join never matches nulls, but a null key is the same key on both sides."""
    left_columns, right_columns = [], []
    for column in key:
        both = pa.concat_arrays(
            [left.column(column).combine_chunks(), right.column(column).combine_chunks()]
        )
        codes = pc.fill_null(pc.dictionary_encode(both).indices.cast(pa.int64()), -1)
        left_columns.append(codes.slice(0, left.num_rows))
        right_columns.append(codes.slice(left.num_rows))
    return (
        pa.Table.from_arrays(left_columns, names=list(names)),
        pa.Table.from_arrays(right_columns, names=list(names)),
    )


def compare_rows(left: pa.Table, right: pa.Table) -> pa.Table:
    """Whole rows as multisets: each copy a row has more often in ``right`` is inserted,
    each it has more often in ``left`` deleted. Both tables have the same schema."""
    both = pa.concat_tables(
        [
            _tagged(left, 1, 0),
            _tagged(right, 0, 1),
        ]
    )
    groups = _group_keys(both)
    counted = groups.group_by(
        [n for n in groups.schema.names if n not in (_IN_LEFT, _IN_RIGHT, _ROW)],
        use_threads=False,
    ).aggregate([(_IN_LEFT, "sum"), (_IN_RIGHT, "sum"), (_ROW, "min")])
    excess = np.asarray(counted.column(f"{_IN_RIGHT}_sum")) - np.asarray(
        counted.column(f"{_IN_LEFT}_sum")
    )
    first = np.asarray(counted.column(f"{_ROW}_min"))
    order = np.argsort(first, kind="stable")  # in the order the rows were read
    excess, first = excess[order], first[order]
    repeats = np.abs(excess)
    rows = np.repeat(first, repeats)
    inserted = np.repeat(excess > 0, repeats)
    source = both.drop_columns([_IN_LEFT, _IN_RIGHT]).take(rows)
    row_type = pa.struct(list(left.schema))
    rows_struct = (
        pa.StructArray.from_arrays(
            [source.column(n).combine_chunks() for n in left.schema.names], fields=list(left.schema)
        )
        if left.schema.names
        else pa.nulls(len(rows), row_type)
    )
    nulls = pa.nulls(len(rows), row_type)
    return pa.Table.from_arrays(
        [
            pa.array(np.where(inserted, INSERTED, DELETED).astype(object), pa.string()),
            pa.nulls(len(rows), pa.struct([])),
            pc.if_else(pa.array(~inserted), rows_struct, nulls),
            pc.if_else(pa.array(inserted), rows_struct, nulls),
            pa.array([[] for _ in range(len(rows))], pa.list_(pa.string())),
        ],
        schema=change_schema(left.schema, ()),
    )


def differs(
    left: pa.ChunkedArray | pa.Array, right: pa.ChunkedArray | pa.Array
) -> npt.NDArray[np.bool_]:
    """Where the two columns of matched rows hold different values (null equals null)."""
    if _comparable(left.type):
        same = pc.equal(left, right)
        both_null = pc.and_(left.is_null(), right.is_null())
        same = pc.or_kleene(same, both_null)
        if pa.types.is_floating(left.type):
            same = pc.or_kleene(same, pc.and_(pc.is_nan(left), pc.is_nan(right)))
        return ~np.asarray(pc.fill_null(same, False).to_numpy(zero_copy_only=False), dtype=bool)
    lhs, rhs = _nan_equal(left.to_pylist()), _nan_equal(right.to_pylist())
    return np.fromiter((a != b for a, b in zip(lhs, rhs, strict=True)), bool, len(lhs))


_NAN = object()


def _nan_equal(value: Any) -> Any:
    """``value`` with every NaN replaced by one object, so that nested NaNs compare equal
    (Python's ``nan != nan``)."""
    if isinstance(value, float):
        return _NAN if math.isnan(value) else value
    if isinstance(value, dict):
        return {k: _nan_equal(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_nan_equal(v) for v in value]
    return value


def _comparable(data_type: pa.DataType) -> bool:
    return not (pa.types.is_nested(data_type) or pa.types.is_dictionary(data_type))


def _check_unique(table: pa.Table, key: list[str], side: str) -> None:
    counts = table.select(key).group_by(key, use_threads=False).aggregate([([], "count_all")])
    repeated = counts.filter(pc.greater(counts.column("count_all"), 1))
    if repeated.num_rows:
        example = {k: repeated.column(k)[0].as_py() for k in key}
        raise DiffError(
            f"the key {', '.join(key)} is not unique in the {side} table's changed rows: "
            f"{count(repeated.num_rows, 'key value')} repeat, such as {example}; diff without "
            "--key "
            "(whole rows) or with a key that identifies rows"
        )


def _positions(count: int) -> pa.Array:
    return pa.array(np.arange(count, dtype=np.int64))


def _tagged(table: pa.Table, in_left: int, in_right: int) -> pa.Table:
    count = table.num_rows
    return table.append_column(_IN_LEFT, pa.array(np.full(count, in_left, np.int64))).append_column(
        _IN_RIGHT, pa.array(np.full(count, in_right, np.int64))
    )


def _group_keys(table: pa.Table) -> pa.Table:
    """``table`` with a row number, and nested columns as canonical JSON text (Arrow groups
    only by scalar values)."""
    columns = []
    for name in table.schema.names:
        column = table.column(name)
        if name not in (_IN_LEFT, _IN_RIGHT) and not _comparable(column.type):
            encoded = [
                None if v is None else msgspec.json.encode(v, order="deterministic")
                for v in column.to_pylist()
            ]
            column = pa.chunked_array([pa.array(encoded, pa.binary())])
        columns.append(column)
    out = pa.Table.from_arrays(columns, names=table.schema.names)
    return out.append_column(_ROW, _positions(table.num_rows))


def _changed_lists(changed: npt.NDArray[np.bool_], names: Sequence[str]) -> pa.Array:
    rows, cols = np.nonzero(changed)
    offsets = np.zeros(changed.shape[0] + 1, dtype=np.int32)
    np.cumsum(np.bincount(rows, minlength=changed.shape[0]), out=offsets[1:])
    values = pa.array(np.asarray(names, dtype=object)[cols] if len(cols) else [], pa.string())
    return pa.ListArray.from_arrays(pa.array(offsets), values)


def _changes(
    left: pa.Table,
    right: pa.Table,
    key: list[str],
    kind: npt.NDArray[np.object_],
    keys: pa.Table,
    left_rows: pa.Array,
    right_rows: pa.Array,
    changed: pa.Array,
) -> pa.Table:
    fields = list(left.schema)
    left_struct = pa.StructArray.from_arrays(
        [left.column(n).combine_chunks() for n in left.schema.names], fields=fields
    )
    right_struct = pa.StructArray.from_arrays(
        [right.column(n).combine_chunks() for n in right.schema.names], fields=fields
    )
    key_struct = pa.StructArray.from_arrays(
        [keys.column(k).combine_chunks() for k in key], fields=[left.schema.field(k) for k in key]
    )
    return pa.Table.from_arrays(
        [
            pa.array(kind, pa.string()),
            key_struct,
            left_struct.take(left_rows),
            right_struct.take(right_rows),
            changed,
        ],
        schema=change_schema(left.schema, key),
    )
