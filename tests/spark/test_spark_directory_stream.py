"""Spark streams in directory mode against moto (S3 and STS in server mode): tables
written by deltalake into the emulated bucket, commits added between runs, read with
``accessMode=dir`` and compared with the same stream in ``url`` mode."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from pyspark.sql import SparkSession
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxFiles

from deltaport.spark.base.options import parse_options
from deltaport.spark.reading.directory import DirectoryPartition
from deltaport.spark.reading.scans import read_schema
from deltaport.spark.streaming.stream import StreamReader
from deltaport.spark.streaming.versions import StreamError
from dir_tables import BUCKET, location, start_dir_server, vend_count, write_dir_profile
from emulators import S3Emulator
from sharing_server import RunningServer, stop_server
from spark_support import flat, run_available_now

STREAM_TABLES = ("grow", "deletes", "feed")


def stream_table(alias: str) -> dict[str, Any]:
    return {
        "name": alias,
        "location": location(alias),
        "accessModes": ["url", "dir"],
        "historyShared": True,
    }


def append(s3: S3Emulator, alias: str, ids: range) -> None:
    data = pa.table({"id": pa.array(list(ids), pa.int64()), "name": [f"n{i}" for i in ids]})
    write_deltalake(
        location(alias),
        data,
        mode="append",
        configuration={"delta.enableChangeDataFeed": "true"},
        storage_options=s3.deltalake_options,
    )


@pytest.fixture(scope="module")
def server(
    s3_emulator: S3Emulator, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningServer]:
    extra = [stream_table(alias) for alias in STREAM_TABLES]
    running = start_dir_server(s3_emulator, tmp_path_factory.mktemp("dir-stream"), extra)
    for alias in STREAM_TABLES:
        for start in range(0, 6, 2):
            append(s3_emulator, alias, range(start, start + 2))
    yield running
    stop_server(running)


@pytest.fixture(scope="module")
def profile(server: RunningServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_dir_profile(tmp_path_factory.mktemp("dir-stream-profile") / "p.share", server)


def test_a_dir_stream_reads_each_row_once_as_url_mode_does(
    spark: SparkSession,
    profile: Path,
    server: RunningServer,
    s3_emulator: S3Emulator,
    tmp_path: Path,
) -> None:
    url = f"{profile}#s.sc.grow"
    before = vend_count(server, "grow")
    by_dir = run_available_now(
        spark, url, tmp_path / "dir", accessMode="dir", maxFilesPerTrigger="2"
    )
    by_url = run_available_now(spark, url, tmp_path / "url", maxFilesPerTrigger="2")
    assert vend_count(server, "grow") > before
    assert [len(b) for b in by_dir] == [len(b) for b in by_url] == [4, 2]
    assert sorted(flat(by_dir)) == sorted(flat(by_url)) == list(range(6))
    append(s3_emulator, "grow", range(6, 8))
    append(s3_emulator, "grow", range(8, 10))
    append(s3_emulator, "grow", range(10, 12))
    assert run_available_now(
        spark, url, tmp_path / "dir", accessMode="dir", maxFilesPerTrigger="2"
    ) == [
        [6, 7, 8, 9],
        [10, 11],
    ]
    assert run_available_now(spark, url, tmp_path / "dir", accessMode="dir") == []
    # between versions a checkpoint carries over to the other mode
    assert run_available_now(spark, url, tmp_path / "url", accessMode="dir") == [list(range(6, 12))]


def test_deletes_and_the_change_feed_in_dir_mode(
    spark: SparkSession, profile: Path, s3_emulator: S3Emulator, tmp_path: Path
) -> None:
    url = f"{profile}#s.sc.deletes"
    checkpoint = tmp_path / "appends"
    assert run_available_now(spark, url, checkpoint, accessMode="dir") == [list(range(6))]
    table = DeltaTable(location("deletes"), storage_options=s3_emulator.deltalake_options)
    table.delete("id = 0")  # rewrites the file of ids 0 and 1
    append(s3_emulator, "deletes", range(6, 8))
    with pytest.raises(RuntimeError, match=r"version 3 of s\.sc\.deletes updates or rewrites"):
        run_available_now(spark, url, checkpoint, accessMode="dir")
    assert run_available_now(
        spark, url, checkpoint, accessMode="dir", skipChangeCommits="true"
    ) == [[6, 7]]
    feed = {"readChangeFeed": "true", "startingVersion": "0"}
    by_dir = run_available_now(spark, url, tmp_path / "feed-dir", accessMode="dir", **feed)
    by_url = run_available_now(spark, url, tmp_path / "feed-url", **feed)
    assert sorted(flat(by_dir)) == sorted(flat(by_url))
    assert (0, "delete", 3) in flat(by_dir) and (7, "insert", 4) in flat(by_dir)


def reader(url: str, **options: str) -> StreamReader:
    parsed = parse_options({"path": url, **options})
    return StreamReader(parsed, read_schema(parsed))


def test_dir_offsets_say_their_mode_and_partitions_carry_credentials(profile: Path) -> None:
    url = f"{profile}#s.sc.feed"
    r = reader(url, accessMode="dir", startingVersion="0")
    try:
        start = r.initialOffset()
        assert start == {"version": 0, "index": 0, "snapshot": False, "mode": "dir"}
        one = r.latestOffset(start, ReadMaxFiles(1))
        assert one == {"version": 1, "index": 0, "snapshot": False, "mode": "dir"}
        everything = r.latestOffset(start, ReadAllAvailable())
        parts = r.partitions(start, everything)
        assert parts and all(isinstance(p, DirectoryPartition) for p in parts)
        plan = parts[0].plan  # type: ignore[attr-defined]
        assert plan.credentials[0].location == f"s3://{BUCKET}/tables/feed"
        rows = sum(b.num_rows for p in parts for b in r.read(p))
        assert rows == 6
        inside = {"version": 2, "index": 1, "snapshot": False}  # a url-mode offset
        with pytest.raises(StreamError, match="inside version 2, read in url access mode"):
            r.partitions(inside, everything)
        between = {"version": 2, "index": 0, "snapshot": False}
        assert r.latestOffset(between, ReadAllAvailable()) == everything
    finally:
        r.stop()
