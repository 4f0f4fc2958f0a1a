"""``to_spark()`` of the official client's table API: the snapshot or change range a table
handle describes, read through the ``deltaSharing`` source, equals deltalake's rows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
from deltalake import DeltaTable
from pyspark.sql import SparkSession

import deltaport as delta_sharing


def test_to_spark_reads_a_snapshot_as_of_a_version(
    spark: SparkSession, server: Any, profile: str, tables: dict[str, Path]
) -> None:
    with delta_sharing.SharingClient(profile) as client:
        frame = client.table("s.d.parted").snapshot(version=1).to_spark()
        latest = client.table("s.d.parted").to_spark()
    expected = DeltaTable(str(tables["parted"]), version=1).to_pyarrow_table()
    assert sorted(r["id"] for r in frame.collect()) == sorted(expected["id"].to_pylist())
    assert latest.count() == DeltaTable(str(tables["parted"])).to_pyarrow_table().num_rows


def test_to_spark_reads_a_change_range(
    spark: SparkSession, server: Any, profile: str, tables: dict[str, Path]
) -> None:
    with delta_sharing.SharingClient(profile) as client:
        frame = client.table("s.d.cdf").changes(starting_version=1, ending_version=1).to_spark()
    changes = pa.table(
        DeltaTable(str(tables["cdf"])).load_cdf(starting_version=1, ending_version=1).read_all()
    ).to_pylist()
    got = sorted((r["id"], r["_change_type"], r["_commit_version"]) for r in frame.collect())
    assert got == sorted((r["id"], r["_change_type"], r["_commit_version"]) for r in changes)
    assert got
