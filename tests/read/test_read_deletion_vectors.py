"""Deletion vectors: the bitmap format, the three storage kinds, and row filtering."""

from __future__ import annotations

import json
import shutil
import struct
import zlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyroaring
import pytest

from corpus import corpus_table, corpus_tables
from deltaport.delta.model import DeletionVector, z85_encode
from deltaport.delta.table import DeltaTable
from deltaport.read import (
    DeletionVectorError,
    decode_bitmap,
    decode_inline,
    decode_stored,
    load_deletion_vector,
    scan_snapshot,
    stored_range,
)
from deltaport.read.deletion_vectors import ROARING_BITMAP_ARRAY_MAGIC, keep_mask
from deltaport.storage import Storage

ROWS = [0, 7, 65_536, 2**32 + 5]


def _serialised(rows: list[int]) -> bytes:
    return struct.pack("<i", ROARING_BITMAP_ARRAY_MAGIC) + pyroaring.BitMap64(rows).serialize()


def _dv_file(bitmap: bytes, *, offset_padding: int = 0) -> tuple[bytes, int]:
    """A DV file (version byte, optional other DVs, then size, bitmap, CRC) and the DV's offset."""
    head = b"\x01" + b"\xff" * offset_padding
    body = struct.pack(">i", len(bitmap)) + bitmap + struct.pack(">I", zlib.crc32(bitmap))
    return head + body, len(head)


def test_decode_bitmap_including_64_bit_rows() -> None:
    assert decode_bitmap(_serialised(ROWS)).tolist() == ROWS


def test_decode_bitmap_refuses_bad_magic_and_garbage() -> None:
    with pytest.raises(DeletionVectorError, match="magic"):
        decode_bitmap(b"\x00\x00\x00\x00" + pyroaring.BitMap64(ROWS).serialize())
    with pytest.raises(DeletionVectorError, match="corrupt deletion vector bitmap"):
        decode_bitmap(struct.pack("<i", ROARING_BITMAP_ARRAY_MAGIC) + b"\x05")
    with pytest.raises(DeletionVectorError, match="shorter than its magic number"):
        decode_bitmap(b"\x01")


def test_decode_stored_from_whole_file_or_own_range() -> None:
    bitmap = _serialised(ROWS)
    data, offset = _dv_file(bitmap, offset_padding=10)
    dv = DeletionVector("u", "x" * 20, offset, len(bitmap), len(ROWS))
    assert decode_stored(data, dv).tolist() == ROWS
    start, length = stored_range(dv)
    assert (start, length) == (offset, len(bitmap) + 8)
    assert decode_stored(data[start : start + length], dv, data_offset=start).tolist() == ROWS


def test_decode_stored_checks_size_and_checksum() -> None:
    bitmap = _serialised(ROWS)
    data, offset = _dv_file(bitmap)
    wrong_size = DeletionVector("u", "x" * 20, offset, len(bitmap) + 1, len(ROWS))
    with pytest.raises(DeletionVectorError, match="size"):
        decode_stored(data, wrong_size)
    corrupt = bytearray(data)
    corrupt[-1] ^= 0xFF
    dv = DeletionVector("u", "x" * 20, offset, len(bitmap), len(ROWS))
    with pytest.raises(DeletionVectorError, match="checksum"):
        decode_stored(bytes(corrupt), dv)
    with pytest.raises(DeletionVectorError, match="truncated"):
        decode_stored(data[:-2], dv)


def test_inline_standard_z85() -> None:
    bitmap = _serialised(ROWS)
    padded = bitmap + b"\x00" * (-len(bitmap) % 4)
    dv = DeletionVector("i", z85_encode(padded), None, len(bitmap), len(ROWS))
    assert decode_inline(dv).tolist() == ROWS


def test_inline_with_rust_z85_padded_tail() -> None:
    dv = DeletionVector("i", "^Bg9^0rr910000000000iXQKl0rr91000005c8Xg##093", None, 34, 1)
    assert decode_inline(dv).tolist() == [3]


def test_every_corpus_deletion_vector_has_its_cardinality() -> None:
    checked = 0
    for table in corpus_tables():
        if "deletion-vectors" not in table.tags or table.data_missing:
            continue
        storage = Storage(str(table.path))
        for commit in sorted((table.path / "_delta_log").glob("*.json")):
            for line in commit.read_text(encoding="utf-8").splitlines():
                action = json.loads(line)
                descriptor = (action.get("add") or {}).get("deletionVector")
                if not descriptor or "{{" in descriptor["pathOrInlineDv"]:
                    continue
                dv = DeletionVector.from_json(descriptor)
                if dv.storage_type == "u" and not storage.exists(
                    storage.resolve(dv.relative_path())
                ):
                    continue  # spark__table-with-dv-*: upstream test prefix, see the summary
                rows = load_deletion_vector(dv, storage)
                assert len(rows) == dv.cardinality, (table.name, descriptor)
                checked += 1
    assert checked >= 20


def test_keep_mask() -> None:
    deleted = np.array([1, 5, 9, 20], dtype=np.uint64)
    assert keep_mask(deleted, 4, 6).tolist() == [True, False, True, True, True, False]
    assert keep_mask(deleted, 10, 5).all()


def _special_char_copy(tmp_path: Path) -> Path:
    """The corpus table whose DV is absolute ('p'), its path template filled in."""
    source = corpus_table("spark__table-with-dv-special-char").path
    target = tmp_path / "table"
    shutil.copytree(source, target)
    commit = target / "_delta_log" / "00000000000000000000.json"
    folder = (target / "folder&with%special char").as_posix()
    encoded = folder.replace("%", "%25").replace(" ", "%20")
    commit.write_text(
        commit.read_text(encoding="utf-8").replace("{{FOLDER_WITH_SPECIAL_CHAR}}", encoded),
        encoding="utf-8",
    )
    return target


def test_absolute_path_deletion_vector_in_special_character_folder(tmp_path: Path) -> None:
    delta = DeltaTable(str(_special_char_copy(tmp_path)))
    snapshot = delta.snapshot()
    dv = DeletionVector.from_json(snapshot.files.column("deletion_vector")[0].as_py())
    assert dv.storage_type == "p"
    deleted = load_deletion_vector(dv, delta.storage)
    assert len(deleted) == dv.cardinality == 5
    rows = pa.Table.from_batches(list(scan_snapshot(snapshot, delta.storage)))
    assert sorted(rows.column("id").to_pylist()) == sorted(set(range(10)) - set(deleted.tolist()))


def test_dv_tables_drop_deleted_rows() -> None:
    table = corpus_table("golden__log-replay-dv-key-cases")
    delta = DeltaTable(str(table.path))
    snapshot = delta.snapshot()
    rows = sum(b.num_rows for b in scan_snapshot(snapshot, delta.storage))
    assert rows == snapshot.num_records == 47
