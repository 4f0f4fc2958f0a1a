"""File ids: stable values, the same one by one and for a whole column."""

from __future__ import annotations

import hashlib
import re

import pyarrow as pa
from cryptography.hazmat.primitives.ciphers import algorithms
from cryptography.hazmat.primitives.cmac import CMAC

from deltaport.server.answers.file_ids import file_id, file_ids


def test_ids_do_not_change_between_releases() -> None:
    # recipients may keep ids (refresh, streaming); a new id scheme must be a deliberate change
    assert file_id("part-00000-1.snappy.parquet") == "c20a594ad94a79d1915901eff4e8bc06"
    assert file_id("region=eu/p%20q.parquet") == "f921cb0b26e276cffc4175753cb1f88a"


def test_an_id_is_the_cmac_of_the_path_under_a_public_key() -> None:
    mac = CMAC(algorithms.AES(hashlib.sha256(b"deltaport file id").digest()[:16]))
    mac.update("dir/ü.parquet".encode())
    assert file_id("dir/ü.parquet") == mac.finalize().hex()


def test_column_ids_equal_single_ids() -> None:
    paths = ["a.parquet", "", "x" * 16, "région=é/😀 file.parquet", "y" * 100]
    column = pa.array(["skipped", *paths], pa.string()).slice(1)
    ids = file_ids(column).to_pylist()
    assert ids == [file_id(p) for p in paths]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch("[0-9a-f]{32}", i) for i in ids)  # 128 bits in lower-case hex
