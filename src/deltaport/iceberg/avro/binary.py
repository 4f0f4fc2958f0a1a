"""Avro's binary encoding, one column at a time: each function gives one binary value per
row, so that a record is the row-wise concatenation of its fields' columns."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

NULL = pa.scalar(b"\x00", pa.binary())
"""An absent optional value: union branch 0 (null); also an empty array or map."""


def varint(value: int) -> bytes:
    """One ``int``/``long`` zig-zag encoded."""
    z = (value << 1) ^ (value >> 63)
    out = bytearray()
    while z > 0x7F:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def varints(values: np.ndarray, valid: np.ndarray | None = None) -> pa.BinaryArray:
    """``int``/``long`` values as zig-zag varints (empty where not ``valid``)."""
    v = np.asarray(values, dtype=np.int64)
    z = ((v << 1) ^ (v >> 63)).view(np.uint64)
    groups = np.empty((len(z), 10), np.uint8)
    lengths = np.ones(len(z), np.int64)
    rest = z
    width = 1
    for i in range(10):
        low = (rest & np.uint64(0x7F)).astype(np.uint8)
        rest = rest >> np.uint64(7)
        more = rest != 0
        groups[:, i] = low | (more.astype(np.uint8) << 7)
        lengths += more
        width = i + 1
        if not more.any():
            break
    return ragged(groups[:, :width], lengths, valid)


def fixed(matrix: np.ndarray, valid: np.ndarray | None = None) -> pa.BinaryArray:
    """Each row of a ``(rows, width)`` uint8 matrix as one value of ``width`` bytes."""
    return ragged(matrix, np.full(len(matrix), matrix.shape[1], np.int64), valid)


def ragged(
    matrix: np.ndarray, lengths: np.ndarray, valid: np.ndarray | None = None
) -> pa.BinaryArray:
    """The first ``lengths[i]`` bytes of each row ``i`` of ``matrix`` (nothing where not
    ``valid``)."""
    if valid is not None:
        lengths = np.where(valid, lengths, 0)
    mask = np.arange(matrix.shape[1]) < lengths[:, None]
    data = np.ascontiguousarray(matrix)[mask]
    offsets = np.zeros(len(lengths) + 1, np.int32)
    np.cumsum(lengths, out=offsets[1:])
    return pa.Array.from_buffers(
        pa.binary(), len(lengths), [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )


def repeated(value: bytes, valid: np.ndarray) -> pa.BinaryArray:
    """``value`` in every ``valid`` row."""
    matrix = np.frombuffer(value, np.uint8)[None, :].repeat(len(valid), axis=0)
    return fixed(matrix, valid)


Piece: TypeAlias = pa.Array | pa.Scalar
"""Part of each row's encoding: an array without nulls (an absent value is empty) or a
constant."""


def records(*pieces: Piece) -> pa.Array:
    """The row-wise concatenation of ``pieces``: one encoded record per row."""
    return pc.binary_join_element_wise(*pieces, constant(b""))


def constant(value: bytes) -> pa.Scalar:
    return pa.scalar(value, pa.binary())


def valid_rows(values: pa.Array) -> np.ndarray:
    return np.asarray(values.is_valid().to_numpy(zero_copy_only=False), bool)


def strings(values: pa.Array) -> list[Piece]:
    """``string``/``bytes`` values: their byte length, then the bytes (nothing where
    null)."""
    raw = values.cast(pa.binary())
    lengths = pc.fill_null(pc.binary_length(raw), 0).to_numpy(zero_copy_only=False)
    if raw.null_count:
        return [varints(lengths, valid_rows(raw)), pc.fill_null(raw, constant(b""))]
    return [varints(lengths), raw]


def optional(pieces: list[Piece], valid: np.ndarray) -> list[Piece]:
    """An optional value (union of null and the value) whose ``pieces`` are empty where
    not ``valid``: branch 0 there, branch 1 and the value elsewhere."""
    branch = np.where(valid, 2, 0).astype(np.uint8).reshape(-1, 1)
    return [fixed(branch), *pieces]


def int_map(items: Sequence[tuple[int, list[Piece], np.ndarray]], rows: int) -> list[Piece]:
    """An optional map from int keys (Iceberg's map-as-array of key/value records):
    ``items`` gives each key with its encoded values (empty where not valid) and where
    it is valid; a row without entries has no map."""
    if not items:
        return [NULL]
    counts = np.zeros(rows, np.int64)
    bodies: list[Piece] = []
    for key, pieces, valid in items:
        counts += valid
        bodies += [repeated(varint(key), valid), *pieces]
    some = counts > 0
    return [*optional([varints(counts, some)], some), *bodies, repeated(b"\x00", some)]


def concatenated(records: pa.Array) -> bytes:
    """All values of a binary array, one after the other."""
    if isinstance(records, pa.ChunkedArray):
        records = records.combine_chunks()
    records = records.cast(pa.binary())
    if len(records) == 0:
        return b""
    offsets = np.frombuffer(records.buffers()[1], np.int32)[
        records.offset : records.offset + len(records) + 1
    ]
    data: bytes = records.buffers()[2][int(offsets[0]) : int(offsets[-1])].to_pybytes()
    return data
