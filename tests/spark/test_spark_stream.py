"""Structured streaming from the deltaSharing data source, against a real server, with
commits written by deltalake between runs."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable
from pyspark.sql import DataFrame, SparkSession

from spark_support import append, run_available_now, table_url


def test_available_now_honours_max_files(spark: SparkSession, profile: str, tmp_path: Path) -> None:
    url = table_url(profile, "snap")
    one_file_each = run_available_now(spark, url, tmp_path / "a", maxFilesPerTrigger="1")
    assert sorted(one_file_each) == [[0, 1], [2, 3], [4, 5]]
    everything = run_available_now(spark, url, tmp_path / "b", maxFilesPerTrigger="10")
    assert everything == [[0, 1, 2, 3, 4, 5]]


def test_restart_reads_each_new_row_once(
    spark: SparkSession,
    profile: str,
    tables: dict[str, Path],
    tmp_path: Path,
) -> None:
    url = table_url(profile, "grow")
    checkpoint = tmp_path / "checkpoint"
    first = run_available_now(spark, url, checkpoint, maxFilesPerTrigger="2")
    assert [len(ids) for ids in first] == [4, 2]
    assert sorted(i for ids in first for i in ids) == list(range(6))
    append(tables["grow"], range(6, 8))
    append(tables["grow"], range(8, 10))
    append(tables["grow"], range(10, 12))
    second = run_available_now(spark, url, checkpoint, maxFilesPerTrigger="2")
    assert second == [[6, 7, 8, 9], [10, 11]]
    assert run_available_now(spark, url, checkpoint) == []


def test_deletes_fail_the_stream_unless_ignored(
    spark: SparkSession,
    profile: str,
    tables: dict[str, Path],
    tmp_path: Path,
) -> None:
    url = table_url(profile, "deletes")
    checkpoint = tmp_path / "checkpoint"
    assert run_available_now(spark, url, checkpoint) == [[0, 1, 2, 3, 4, 5]]
    DeltaTable(str(tables["deletes"])).delete("id = 0")  # rewrites the file of ids 0 and 1
    append(tables["deletes"], range(6, 8))
    with pytest.raises(RuntimeError, match=r"version 3 of s\.d\.deletes updates or rewrites rows"):
        run_available_now(spark, url, checkpoint)
    copy = tmp_path / "copy"
    shutil.copytree(checkpoint, copy)
    assert run_available_now(spark, url, checkpoint, skipChangeCommits="true") == [[6, 7]]
    assert run_available_now(spark, url, copy, ignoreChanges="true") == [[1, 6, 7]]


def test_compaction_adds_no_rows_to_a_stream(
    spark: SparkSession, profile: str, tables: dict[str, Path], tmp_path: Path
) -> None:
    """A compaction rewrites files without changing rows (dataChange false, which the
    delta response format shows and the parquet one leaves out): streams skip it."""
    url = table_url(profile, "compacted")
    checkpoints = {fmt: tmp_path / fmt for fmt in ("delta", "parquet")}
    for fmt, checkpoint in checkpoints.items():
        first = run_available_now(spark, url, checkpoint, responseFormat=fmt)
        assert first == [[0, 1, 2, 3, 4, 5]]
    DeltaTable(str(tables["compacted"])).optimize.compact()
    append(tables["compacted"], range(6, 8))
    for fmt, checkpoint in checkpoints.items():
        assert run_available_now(spark, url, checkpoint, responseFormat=fmt) == [[6, 7]]


def test_change_data_feed_stream(spark: SparkSession, profile: str, tmp_path: Path) -> None:
    rows: list[tuple[Any, ...]] = []

    def collect(df: DataFrame, batch_id: int) -> None:
        rows.extend((r.id, r._change_type, r._commit_version) for r in df.collect())

    query = (
        spark.readStream.format("deltaSharing")
        .options(readChangeFeed="true", startingVersion="0")
        .load(table_url(profile, "cdf"))
        .writeStream.foreachBatch(collect)
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(180)
    assert query.exception() is None
    assert sorted(rows) == [(i, "insert", 0 if i < 3 else 1) for i in range(5)]
