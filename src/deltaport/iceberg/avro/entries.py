"""Data manifest entries (Iceberg's ``manifest_entry`` of format versions 2 and 3, as
:func:`deltaport.iceberg.convert.avro_schemas.manifest_entry_schema` declares it) encoded
for many files at once: one Avro binary record per file."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from deltaport.iceberg.avro.binary import (
    NULL,
    Piece,
    constant,
    fixed,
    int_map,
    optional,
    records,
    strings,
    valid_rows,
    varints,
)

_HEAD = constant(b"\x02\x00\x02\x00\x02\x00\x00")
"""status 1 (added), snapshot id null (inherited), sequence numbers 0, content 0 (data)."""

_PARQUET = constant(b"\x0ePARQUET")


@dataclass(frozen=True)
class EntryColumns:
    """What the data manifest entries of some files hold, one value per file."""

    paths: pa.Array
    sizes: pa.Array
    records: np.ndarray
    value_counts: Sequence[tuple[int, pa.Array]]
    null_counts: Sequence[tuple[int, pa.Array]]
    lower_bounds: Sequence[tuple[int, pa.Array]]
    upper_bounds: Sequence[tuple[int, pa.Array]]
    partition: Sequence[tuple[str, pa.Array]]
    """Each partition field's Iceberg type and values."""


def data_entries(columns: EntryColumns, format_version: int) -> pa.Array:
    """One encoded ``manifest_entry`` record per file."""
    rows = len(columns.paths)
    absent = 4 + (4 if format_version >= 3 else 0)
    pieces: list[Piece] = [_HEAD, *strings(columns.paths), _PARQUET]
    for kind, values in columns.partition:
        pieces += optional(partition_value(kind, values), valid_rows(values))
    pieces += [varints(columns.records), varints(_int64(columns.sizes)), NULL]
    pieces += int_map([_counts(k, v) for k, v in columns.value_counts], rows)
    pieces += int_map([_counts(k, v) for k, v in columns.null_counts], rows)
    pieces.append(NULL)
    pieces += int_map([_bytes(k, v) for k, v in columns.lower_bounds], rows)
    pieces += int_map([_bytes(k, v) for k, v in columns.upper_bounds], rows)
    pieces.append(constant(b"\x00" * absent))
    return records(*pieces)


def _int64(values: pa.Array) -> np.ndarray:
    return np.asarray(pc.fill_null(values.cast(pa.int64()), 0).to_numpy(zero_copy_only=False))


MapItem = tuple[int, list[Piece], np.ndarray]


def _counts(key: int, values: pa.Array) -> MapItem:
    valid = valid_rows(values)
    return key, [varints(_int64(values), valid)], valid


def _bytes(key: int, values: pa.Array) -> MapItem:
    return key, strings(values), valid_rows(values)


def partition_value(kind: str, values: pa.Array) -> list[Piece]:
    """Partition values of Iceberg type ``kind`` encoded, empty where null."""
    if kind in ("string", "binary"):
        return strings(values)
    return [_partition_value(kind, values)]


def _partition_value(kind: str, values: pa.Array) -> pa.Array:
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    valid = valid_rows(values) if values.null_count else None
    if kind == "boolean":
        flags = pc.fill_null(values, False).to_numpy(zero_copy_only=False)
        return fixed(flags.astype(np.uint8).reshape(-1, 1), valid)
    if kind in ("int", "long", "date"):
        return varints(_int64(values.cast(pa.int32()) if kind == "date" else values), valid)
    if kind in ("timestamp", "timestamptz"):
        micros = values.cast(pa.timestamp("us", tz=values.type.tz)).cast(pa.int64())
        return varints(_int64(micros), valid)
    if kind in ("float", "double"):
        numbers = pc.fill_null(values, 0).to_numpy(zero_copy_only=False)
        single = np.ascontiguousarray(numbers.astype("<f4" if kind == "float" else "<f8"))
        return fixed(single.view(np.uint8).reshape(len(single), -1), valid)
    if kind.startswith("decimal("):
        return _decimals(values, decimal_bytes(int(kind[8:].split(",")[0])), valid)
    raise ValueError(f"no Avro encoding for partition values of {kind}")


def decimal_bytes(precision: int) -> int:
    """The fixed size Iceberg stores a decimal of ``precision`` digits in."""
    size = 1
    while 10**precision > 2 ** (8 * size - 1):
        size += 1
    return size


def _decimals(values: pa.Array, size: int, valid: np.ndarray | None) -> pa.Array:
    """Unscaled decimal128 values as ``size``-byte big-endian two's complement."""
    words = np.frombuffer(values.buffers()[1], np.uint8)[
        16 * values.offset : 16 * (values.offset + len(values))
    ].reshape(-1, 16)
    return fixed(np.ascontiguousarray(words[:, :size][:, ::-1]), valid)
