"""Avro's binary encoding, one column at a time: each function gives one binary value per
row, so that a record is the row-wise concatenation of its fields' columns."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

NULL = pa.scalar(b"\x00", pa.binary())
"""An absent optional value: union branch 0 (null); also an empty array or map."""

BRANCH_ONE = pa.scalar(b"\x02", pa.binary())
"""The union branch index 1 (the value's), zig-zag encoded."""


def varint(value: int) -> bytes:
    """One ``int``/``long`` zig-zag encoded."""
    z = (value << 1) ^ (value >> 63)
    out = bytearray()
    while z > 0x7F:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def varints(values: np.ndarray) -> pa.BinaryArray:
    """``int``/``long`` values as zig-zag varints."""
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
    return ragged(groups[:, :width], lengths)


def fixed(matrix: np.ndarray) -> pa.BinaryArray:
    """Each row of a ``(rows, width)`` uint8 matrix as one value of ``width`` bytes."""
    return ragged(matrix, np.full(len(matrix), matrix.shape[1], np.int64))


def ragged(matrix: np.ndarray, lengths: np.ndarray) -> pa.BinaryArray:
    """The first ``lengths[i]`` bytes of each row ``i`` of ``matrix``."""
    mask = np.arange(matrix.shape[1]) < lengths[:, None]
    data = np.ascontiguousarray(matrix)[mask]
    offsets = np.zeros(len(lengths) + 1, np.int32)
    np.cumsum(lengths, out=offsets[1:])
    return pa.Array.from_buffers(
        pa.binary(), len(lengths), [None, pa.py_buffer(offsets), pa.py_buffer(data)]
    )


def strings(values: pa.Array) -> pa.Array:
    """``string``/``bytes`` values (no nulls): their byte length, then the bytes."""
    raw = values.cast(pa.binary())
    lengths = pc.binary_length(raw).to_numpy(zero_copy_only=False)
    return joined(varints(lengths), raw)


def joined(*parts: pa.Array | pa.Scalar) -> pa.Array:
    """The row-wise concatenation of ``parts`` (arrays and constants)."""
    scalars = [p for p in parts if isinstance(p, pa.Scalar)]
    if len(scalars) == len(parts):
        return pa.scalar(b"".join(s.as_py() for s in scalars), pa.binary())
    return pc.binary_join_element_wise(*parts, pa.scalar(b"", pa.binary()))


def constant(value: bytes) -> pa.Scalar:
    return pa.scalar(value, pa.binary())


def optional(encoded: pa.Array) -> pa.Array:
    """An optional value (union of null and the value): null rows become branch 0, the
    others branch 1 and their encoding."""
    return pc.fill_null(joined(BRANCH_ONE, encoded), NULL)


def int_map(items: Sequence[tuple[int, pa.Array]], rows: int) -> pa.Array:
    """An optional map from int keys (Iceberg's map-as-array of key/value records):
    ``items`` gives each key with its encoded values, null where the row has no entry; a
    row without entries has no map."""
    if not items:
        return pa.repeat(NULL, rows)
    counts = np.zeros(rows, np.int64)
    bodies = []
    for key, values in items:
        counts += values.is_valid().to_numpy(zero_copy_only=False)
        bodies.append(pc.fill_null(joined(constant(varint(key)), values), constant(b"")))
    block = joined(BRANCH_ONE, varints(counts), *bodies, NULL)
    return pc.if_else(pa.array(counts > 0), block, NULL)


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
