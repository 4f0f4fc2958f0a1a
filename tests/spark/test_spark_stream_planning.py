"""The stream reader's driver side (offsets, admission control, version polling), called
directly against a real server: no Spark query needed."""

from __future__ import annotations

from pathlib import Path

from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxBytes, ReadMaxFiles

from deltaport.spark.base.options import parse_options
from deltaport.spark.reading.partitions import FilesPartition
from deltaport.spark.reading.scans import read_schema
from deltaport.spark.streaming.stream import StreamReader
from spark_support import append, table_url


def reader(url: str, **options: str) -> StreamReader:
    parsed = parse_options({"path": url, **options})
    return StreamReader(parsed, read_schema(parsed))


def files_between(r: StreamReader, start: dict[str, object], end: dict[str, object]) -> int:
    parts = r.partitions(start, end)
    return sum(len(p.plan.files) for p in parts if isinstance(p, FilesPartition))


def test_snapshot_offsets_and_limits(profile: str) -> None:
    r = reader(table_url(profile, "snap"), maxFilesPerTrigger="2")
    start = r.initialOffset()
    assert start == {"version": 2, "index": 0, "snapshot": True}
    assert r.getDefaultReadLimit() == ReadMaxFiles(2)
    two = r.latestOffset(start, ReadMaxFiles(2))
    assert two == {"version": 2, "index": 2, "snapshot": True}
    assert files_between(r, start, two) == 2
    rest = r.latestOffset(two, ReadMaxFiles(2))
    assert rest == {"version": 3, "index": 0, "snapshot": False}
    assert files_between(r, two, rest) == 1
    assert r.latestOffset(start, ReadAllAvailable()) == rest
    assert files_between(r, start, rest) == 3
    assert r.partitions(rest, rest) == []


def test_max_bytes_admits_at_least_one_file(profile: str) -> None:
    r = reader(table_url(profile, "snap"), maxBytesPerTrigger="1")
    start = r.initialOffset()
    assert r.getDefaultReadLimit() == ReadMaxBytes(1)
    assert r.latestOffset(start, ReadMaxBytes(1))["index"] == 1


def test_version_polled_at_most_once_per_interval(profile: str, tables: dict[str, Path]) -> None:
    url = table_url(profile, "polled")
    slow = reader(url, versionPollIntervalSeconds="3600")
    eager = reader(url, versionPollIntervalSeconds="0")
    later = reader(url)
    later.prepareForTriggerAvailableNow()
    starts = [r.initialOffset() for r in (slow, eager, later)]
    append(tables["polled"], range(6, 8))
    for r, start in zip((slow, eager), starts[:2], strict=True):
        r.latestOffset(start, ReadMaxFiles(1))
    assert slow.reportLatestOffset() == {"version": 3, "index": 0, "snapshot": False}
    assert eager.reportLatestOffset() == {"version": 4, "index": 0, "snapshot": False}
    # availableNow reads up to the version current when the query started
    end = later.latestOffset(starts[2], ReadAllAvailable())
    assert end == {"version": 3, "index": 0, "snapshot": False}
    assert later.latestOffset(end, ReadAllAvailable()) == end
