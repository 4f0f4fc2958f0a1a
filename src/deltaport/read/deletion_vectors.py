"""Deletion vectors: decoding the row indexes a DV marks as deleted, and loading them.

A DV is a serialised ``RoaringBitmapArray``: the magic number 1681511377 (little-endian
int32), then the portable 64-bit Roaring format. Inline DVs (``i``) hold it z85-encoded
in the log. ``u`` (relative to the table root) and ``p`` (absolute URI) DVs point into a
DV file, which starts with a version byte; at ``offset`` each DV is stored as a 4-byte
big-endian size, the bitmap, and a 4-byte big-endian CRC-32 of the bitmap.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np
import numpy.typing as npt
import pyroaring

from deltaport.delta.model import DeletionVector, z85_decode
from deltaport.storage import Storage, resolve_log_path

ROARING_BITMAP_ARRAY_MAGIC = 1681511377
DV_FILE_FORMAT_VERSION = 1

RowIndexes = npt.NDArray[np.uint64]
"""Sorted, unique row indexes (0-based positions in the data file)."""


class DeletionVectorError(ValueError):
    """A deletion vector that cannot be decoded (bad magic, size or checksum)."""


def decode_bitmap(data: bytes) -> RowIndexes:
    """Row indexes of a serialised ``RoaringBitmapArray`` (magic number + portable 64-bit)."""
    if len(data) < 4:
        raise DeletionVectorError("deletion vector shorter than its magic number")
    (magic,) = struct.unpack_from("<i", data, 0)
    if magic != ROARING_BITMAP_ARRAY_MAGIC:
        raise DeletionVectorError(f"unknown deletion vector magic number {magic}")
    try:
        bitmap = pyroaring.BitMap64.deserialize(data[4:])
    except (ValueError, TypeError) as exc:
        raise DeletionVectorError(f"corrupt deletion vector bitmap: {exc}") from exc
    return np.asarray(bitmap.to_array(), dtype=np.uint64)


def decode_inline(dv: DeletionVector) -> RowIndexes:
    """Row indexes of an inline (``i``) DV."""
    if dv.storage_type != "i":
        raise ValueError("not an inline deletion vector")
    try:
        data = z85_decode(dv.path_or_inline_dv)
    except ValueError as exc:
        raise DeletionVectorError(f"inline deletion vector is not valid z85: {exc}") from exc
    return decode_bitmap(data[: dv.size_in_bytes])


def decode_stored(data: bytes, dv: DeletionVector, *, data_offset: int = 0) -> RowIndexes:
    """Row indexes of a ``u``/``p`` DV from DV-file bytes.

    ``data`` holds the DV file from byte ``data_offset`` on (0: the whole file; pass the
    DV's ``offset`` when only its own range was fetched). The size and CRC are checked.
    """
    start = (dv.offset or 1) - data_offset
    if start < 0 or start + 4 > len(data):
        raise DeletionVectorError("deletion vector offset lies outside the given bytes")
    (size,) = struct.unpack_from(">i", data, start)
    if size != dv.size_in_bytes:
        raise DeletionVectorError(f"deletion vector size {size} != descriptor {dv.size_in_bytes}")
    body = data[start + 4 : start + 4 + size]
    checksum = data[start + 4 + size : start + 8 + size]
    if len(body) != size or len(checksum) != 4:
        raise DeletionVectorError("deletion vector bytes are truncated")
    if struct.unpack(">I", checksum)[0] != zlib.crc32(body):
        raise DeletionVectorError("deletion vector checksum mismatch")
    return decode_bitmap(body)


def stored_range(dv: DeletionVector) -> tuple[int, int]:
    """(offset, length) of a stored DV inside its file: size, bitmap and checksum."""
    return (dv.offset or 1), 4 + dv.size_in_bytes + 4


def load_deletion_vector(dv: DeletionVector, storage: Storage) -> RowIndexes:
    """Row indexes of any DV, reading ``u``/``p`` DV files through ``storage``."""
    if dv.storage_type == "i":
        return decode_inline(dv)
    if dv.storage_type == "u":
        location = storage.resolve(dv.relative_path())
    elif dv.storage_type == "p":
        location = resolve_log_path(storage.root, dv.path_or_inline_dv)
    else:
        raise DeletionVectorError(f"unknown deletion vector storage type {dv.storage_type!r}")
    offset, length = stored_range(dv)
    return decode_stored(storage.read_range(location, offset, length), dv, data_offset=offset)


def keep_mask(deleted: RowIndexes, start: int, length: int) -> npt.NDArray[np.bool_]:
    """Boolean mask of rows ``start .. start+length`` of a file that are not deleted."""
    mask = np.ones(length, dtype=np.bool_)
    lo, hi = np.searchsorted(deleted, [start, start + length])
    if hi > lo:
        mask[(deleted[lo:hi] - np.uint64(start)).astype(np.intp)] = False
    return mask
