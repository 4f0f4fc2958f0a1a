"""A small partitioned Delta table written into an object store, and checks over it."""

from __future__ import annotations

import io
import json
from datetime import timedelta

import httpx
import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import write_deltalake

from deltaport.storage import Location, ObjectNotFoundError, Storage, resolve_log_path

PARTITIONS = ["plain", "😈 a&b+c=d%e", "x/y #?"]


def write_table(uri: str, storage_options: dict[str, str]) -> int:
    """Two commits (a write and an append); returns the total row count."""
    first = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "p": PARTITIONS})
    second = pa.table({"id": pa.array([4, 5], pa.int64()), "p": PARTITIONS[1:]})
    write_deltalake(uri, first, partition_by=["p"], storage_options=storage_options)
    write_deltalake(uri, second, partition_by=["p"], mode="append", storage_options=storage_options)
    return first.num_rows + second.num_rows


def data_files(storage: Storage) -> list[Location]:
    out = []
    for version in (0, 1):
        log = storage.read(storage.resolve(f"_delta_log/{version:020d}.json")).decode()
        for line in log.splitlines():
            action = json.loads(line)
            if "add" in action:
                out.append(resolve_log_path(storage.root, action["add"]["path"]))
    return out


def check_reads(storage: Storage) -> None:
    listed = storage.list_dir("_delta_log")
    names = [o.name for o in listed]
    assert names[:2] == [f"{0:020d}.json", f"{1:020d}.json"]
    commit = storage.resolve("_delta_log/" + names[1])
    whole = storage.read(commit)
    assert len(whole) == listed[1].size == storage.head(commit).size
    assert storage.read_range(commit, 3, 10) == whole[3:13]
    assert storage.list_dir("no_such_dir") == []
    missing = storage.resolve("_delta_log/99999999999999999999.json")
    assert not storage.exists(missing)
    try:
        storage.read(missing)
    except ObjectNotFoundError:
        pass
    else:
        raise AssertionError("reading a missing object must raise ObjectNotFoundError")
    for location in data_files(storage):
        assert storage.read(location)[:4] == b"PAR1"


def check_signed_downloads(storage: Storage, expected_rows: int) -> list[str]:
    """Signs every data file, downloads each URL, compares bytes; returns the URLs."""
    files = data_files(storage)
    assert any("%" in f.key for f in files), "partition directories hold escaped names"
    urls = storage.sign(files, timedelta(minutes=10))
    rows = 0
    with httpx.Client(timeout=30) as client:
        for location, url in zip(files, urls, strict=True):
            response = client.get(url)
            assert response.status_code == 200, (location.key, response.text[:500])
            assert response.content == storage.read(location)
            rows += pq.read_table(io.BytesIO(response.content)).num_rows
    assert rows == expected_rows
    return urls


def tamper(url: str, parameter: str) -> str:
    """``url`` with the first character of ``parameter``'s value changed."""
    head, value = url.split(f"{parameter}=", 1)
    return f"{head}{parameter}={'A' if value[0] != 'A' else 'B'}{value[1:]}"
