"""Change data feed of the corpus tables with CDF enabled.

Checked three ways: equal to deltalake's ``load_cdf`` where deltalake reads the feed;
for every table, the net change (inserts and post-images minus deletes and pre-images)
equals the difference between the snapshots around the range; and the kernel's own
expected feed for the table whose deletion vectors change in every commit.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import deltalake
import pyarrow as pa
import pytest
from read_compare import first_difference, normalise_value, same_rows

from corpus import corpus_table, corpus_tables
from deltaport.delta.errors import CdfNotEnabledError, VersionNotFoundError
from deltaport.delta.table import DeltaTable
from deltaport.read import read_change_data, scan_snapshot, table_arrow_schema
from deltaport.read.scan import end_metadata

DELTALAKE_CDF = [
    "drs__cdc_ict_table",
    "drs__cdf-table",
    "drs__cdf-table-non-partitioned",
    "drs__cdf-table-with-cdc-and-dvs",
    "drs__simple_table_with_cdc",
    "golden__commit-info-containing-arbitrary-operationParams-types",
    "krs__cdf-table-with-dv",
    "krs__compacted-log-files-table",
]
"""Tables whose feed deltalake reads (it refuses column mapping and the file names with
``%`` of the kernel CDF tables)."""

SYNTHETIC_CDC = {"krs__cdf-table-simple", "krs__cdf-table-update-ops"}
"""Kernel test tables whose cdc files do not match their adds and removes."""


def _first_comparable_start(delta: DeltaTable) -> int | None:
    """The first version whose feed can be read and whose previous snapshot exists."""
    for start in range(delta.latest_version() + 1):
        try:
            delta.change_data(start)
            if start > 0:
                delta.snapshot(start - 1)
        except (CdfNotEnabledError, VersionNotFoundError):
            continue
        return start
    return None


def read_feed(delta: DeltaTable, start: int) -> pa.Table:
    changes = delta.change_data(start)
    schema = table_arrow_schema(end_metadata(changes), cdf=True)
    return pa.Table.from_batches(list(read_change_data(changes, delta.storage)), schema=schema)


def _rows(table: pa.Table, columns: list[str]) -> Counter[tuple[Any, ...]]:
    data = [table.column(c).to_pylist() for c in columns]
    return Counter(tuple(normalise_value(col[i]) for col in data) for i in range(table.num_rows))


def _snapshot_rows(delta: DeltaTable, version: int) -> pa.Table:
    snapshot = delta.snapshot(version)
    batches = scan_snapshot(snapshot, delta.storage)
    return pa.Table.from_batches(list(batches), schema=table_arrow_schema(snapshot.metadata))


@pytest.mark.parametrize("name", DELTALAKE_CDF)
def test_feed_equals_deltalake(name: str) -> None:
    table = corpus_table(name)
    got = read_feed(DeltaTable(str(table.path)), 0)
    expected = pa.table(deltalake.DeltaTable(str(table.path)).load_cdf(starting_version=0))
    # deltalake types _commit_version as uint64; the protocol and Spark as long (int64)
    assert expected.schema.field("_commit_version").type == pa.uint64()
    position = expected.schema.get_field_index("_commit_version")
    versions = expected.column(position).cast(pa.int64())
    expected = expected.set_column(position, "_commit_version", versions)
    # Commit timestamps differ on purpose: deltalake takes commitInfo.timestamp, the
    # protocol (and Spark) the commit file's modification time.
    columns = [c for c in got.column_names if c != "_commit_timestamp"]
    assert sorted(columns) == sorted(c for c in expected.column_names if c != "_commit_timestamp")
    assert same_rows(expected, got, columns), first_difference(expected, got, columns)


CDF_TABLES = [
    t.name
    for t in corpus_tables()
    if "cdf" in t.tags and not t.negative and not t.data_missing and t.name not in SYNTHETIC_CDC
]


@pytest.mark.parametrize("name", CDF_TABLES)
def test_net_change_equals_snapshot_difference(name: str) -> None:
    delta = DeltaTable(str(corpus_table(name).path))
    start = _first_comparable_start(delta)
    if start is None:
        pytest.skip("the change data feed is never enabled over a readable range")
    feed = read_feed(delta, start)
    end = delta.latest_version()
    after = _snapshot_rows(delta, end)
    columns = after.column_names
    net: Counter[tuple[Any, ...]] = Counter()
    for change_type, row in zip(
        feed.column("_change_type").to_pylist(), _rows_list(feed, columns), strict=True
    ):
        net[row] += 1 if change_type in ("insert", "update_postimage") else -1
    before = _rows(_snapshot_rows(delta, start - 1), columns) if start > 0 else Counter()
    difference = Counter(_rows(after, columns))
    difference.subtract(before)
    assert {k: v for k, v in net.items() if v} == {k: v for k, v in difference.items() if v}


def _rows_list(table: pa.Table, columns: list[str]) -> list[tuple[Any, ...]]:
    data = [table.column(c).to_pylist() for c in columns]
    return [tuple(normalise_value(col[i]) for col in data) for i in range(table.num_rows)]


def test_feed_metadata_columns() -> None:
    delta = DeltaTable(str(corpus_table("drs__cdf-table").path))
    changes = delta.change_data(0)
    feed = read_feed(delta, 0)
    assert feed.schema.field("_commit_version").type == pa.int64()
    assert feed.schema.field("_commit_timestamp").type == pa.timestamp("us", tz="UTC")
    stamps = {entry.version: entry.timestamp * 1000 for entry in changes.versions}
    versions = feed.column("_commit_version").to_pylist()
    micros = feed.column("_commit_timestamp").cast(pa.int64()).to_pylist()
    assert all(stamps[v] == m for v, m in zip(versions, micros, strict=True))
    assert set(feed.column("_change_type").to_pylist()) >= {"insert", "delete"}


def test_deletion_vector_changes_match_kernel_expectation() -> None:
    """Each commit deletes or restores rows only through a new deletion vector (the last
    ones inline, with a Rust-z85 padded tail)."""
    feed = read_feed(DeltaTable(str(corpus_table("krs__cdf-table-with-dv").path)), 0)
    got = sorted(
        zip(
            feed.column("_commit_version").to_pylist(),
            feed.column("_change_type").to_pylist(),
            feed.column("value").to_pylist(),
            strict=True,
        )
    )
    expected = [(0, "insert", v) for v in range(10)]
    expected += [(1, "delete", 0), (1, "delete", 9), (2, "insert", 0), (2, "insert", 9)]
    expected += [(3, "delete", v) for v in (0, 1, 4, 5)]
    expected += [(4, "insert", 1), (4, "insert", 4)]
    expected += [(5, "delete", 3), (5, "insert", 0), (5, "insert", 5), (6, "insert", 3)]
    assert got == sorted(expected)


def test_synthetic_cdc_tables_pass_change_types_through() -> None:
    feed = read_feed(DeltaTable(str(corpus_table("krs__cdf-table-update-ops").path)), 0)
    assert set(feed.column("_change_type").to_pylist()) == {
        "insert",
        "update_pre",
        "update_post",
    }
