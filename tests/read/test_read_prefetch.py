"""Prefetching files ahead, and scans of a table on an object store (moto S3)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import obstore
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from obstore.store import S3Store
from read_compare import first_difference, same_rows
from test_read_corpus_expected import read_table

from corpus import corpus_table
from deltaport.delta.table import DeltaTable
from deltaport.read import scan_snapshot, table_arrow_schema
from deltaport.read.prefetch import ordered_map
from emulators import S3Emulator, s3_emulator  # noqa: F401


def test_prefetched_keeps_order_and_bounds_concurrency() -> None:
    running = 0
    peak = 0
    lock = threading.Lock()

    def load(i: int) -> int:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
        time.sleep(0.01)
        with lock:
            running -= 1
        return i * 2

    assert list(ordered_map(load, range(20), workers=3, window=3)) == [i * 2 for i in range(20)]
    assert 1 < peak <= 3
    assert list(ordered_map(load, range(5), workers=0, window=0)) == [0, 2, 4, 6, 8]


def test_prefetched_stops_loading_when_closed() -> None:
    started: list[int] = []

    def load(i: int) -> int:
        started.append(i)
        return i

    iterator = ordered_map(load, range(100), workers=2, window=2)
    assert next(iterator) == 0
    iterator.close()
    assert len(started) <= 4


def test_prefetched_raises_load_errors_in_order() -> None:
    def load(i: int) -> int:
        if i == 2:
            raise FileNotFoundError(str(i))
        return i

    iterator = ordered_map(load, range(5), workers=2, window=2)
    assert [next(iterator), next(iterator)] == [0, 1]
    with pytest.raises(FileNotFoundError):
        next(iterator)


def _upload(emulator: S3Emulator, bucket: str, root: Path) -> None:
    emulator.create_bucket(bucket)
    store = S3Store(bucket, config=emulator.options)  # type: ignore[arg-type]
    for path in root.rglob("*"):
        if path.is_file():
            obstore.put(store, f"t/{path.relative_to(root).as_posix()}", path.read_bytes())


def test_dv_and_column_mapping_table_on_s3(s3_emulator: S3Emulator) -> None:  # noqa: F811
    table = corpus_table("golden__dv-with-columnmapping")
    _upload(s3_emulator, "read-dv", table.path)
    delta = DeltaTable("s3://read-dv/t", s3_emulator.options)
    snapshot = delta.snapshot()
    got = pa.Table.from_batches(
        list(scan_snapshot(snapshot, delta.storage)), schema=table_arrow_schema(snapshot.metadata)
    )
    assert table.expected_path is not None
    expected = pq.read_table(table.expected_path)
    columns = got.column_names
    assert same_rows(expected, got, columns), first_difference(expected, got, columns)
    assert got.num_rows == read_table(table).num_rows == 35
