"""Matching data-file columns to table fields, and conforming them to the table schema.

Which file column holds a table field depends on the column mapping mode: ``none`` uses
the logical name (exact, then case-insensitive as Spark), ``name`` the physical name and
``id`` the parquet field id (falling back to the physical name). Struct fields are matched
the same way at every nesting level; a field missing from the file (added by schema
evolution after the file was written) reads as nulls.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc

from deltaport.protocol.schema import (
    PARQUET_FIELD_ID_KEY,
    ArrayType,
    DataType,
    MapType,
    StructField,
    StructType,
    to_arrow_type,
)
from deltaport.read.casting import cast_leaf

COLUMN_MAPPING_MODES = ("none", "name", "id")


def find_file_field(file_fields: Sequence[pa.Field], target: StructField, mode: str) -> int | None:
    """Index of the file field holding ``target``, or None when the file lacks it."""
    if mode == "id" and target.field_id is not None:
        wanted = str(target.field_id).encode()
        for i, f in enumerate(file_fields):
            if f.metadata and f.metadata.get(PARQUET_FIELD_ID_KEY) == wanted:
                return i
    name = target.physical_name if mode in ("name", "id") else target.name
    for i, f in enumerate(file_fields):
        if f.name == name:
            return i
    lowered = name.lower()
    for i, f in enumerate(file_fields):
        if f.name.lower() == lowered:
            return i
    return None


def file_columns_for(file_schema: pa.Schema, fields: Sequence[StructField], mode: str) -> list[str]:
    """Names of the top-level file columns to read for ``fields`` (present ones only)."""
    file_fields = list(file_schema)
    out: list[str] = []
    for f in fields:
        index = find_file_field(file_fields, f, mode)
        if index is not None and file_fields[index].name not in out:
            out.append(file_fields[index].name)
    return out


def conform_columns(
    batch: pa.RecordBatch, fields: Sequence[StructField], mode: str
) -> list[pa.Array]:
    """The columns of ``batch`` for ``fields``, renamed, cast and null-filled as needed."""
    file_fields = list(batch.schema)
    out = []
    for f in fields:
        index = find_file_field(file_fields, f, mode)
        if index is None:
            out.append(pa.nulls(batch.num_rows, to_arrow_type(f.type)))
        else:
            out.append(conform_array(batch.column(index), f.type, mode))
    return out


def conform_array(array: pa.Array, data_type: DataType, mode: str) -> pa.Array:
    """Recursively conform one file column to a Delta type."""
    target = to_arrow_type(data_type)
    if array.type == target:
        return array
    if pa.types.is_null(array.type):
        return pa.nulls(len(array), target)
    if isinstance(data_type, StructType):
        return _conform_struct(array, data_type, mode)
    if isinstance(data_type, ArrayType):
        offsets, child = _offsets_and_values(array)
        values = conform_array(child, data_type.element_type, mode)
        return pa.ListArray.from_arrays(offsets, values, type=target, mask=_null_mask(array))
    if isinstance(data_type, MapType):
        offsets, entries = _offsets_and_values(array)
        keys = conform_array(entries.field(0), data_type.key_type, mode)
        items = conform_array(entries.field(1), data_type.value_type, mode)
        return pa.MapArray.from_arrays(offsets, keys, items, type=target, mask=_null_mask(array))
    return cast_leaf(array, target)


def _conform_struct(array: pa.Array, data_type: StructType, mode: str) -> pa.Array:
    if not pa.types.is_struct(array.type):
        raise TypeError(f"cannot read a {array.type} column as a struct")
    file_fields = list(array.type)
    children = []
    for f in data_type.fields:
        index = find_file_field(file_fields, f, mode)
        if index is None:
            children.append(pa.nulls(len(array), to_arrow_type(f.type)))
        else:
            children.append(conform_array(array.field(index), f.type, mode))
    target = to_arrow_type(data_type)
    return pa.StructArray.from_arrays(children, fields=list(target), mask=_null_mask(array))


def _offsets_and_values(array: pa.Array) -> tuple[pa.Array, pa.Array]:
    """Offsets starting at 0 and the child values they index, for a (possibly sliced)
    list or map array: Arrow cannot rebuild a sliced list with nulls from its offsets."""
    offsets = array.offsets
    first, last = offsets[0].as_py(), offsets[-1].as_py()
    rebased = pc.subtract(offsets, pa.scalar(first, offsets.type)).cast(pa.int32())
    return rebased, array.values.slice(first, last - first)


def _null_mask(array: pa.Array) -> pa.Array | None:
    return array.is_null() if array.null_count else None
