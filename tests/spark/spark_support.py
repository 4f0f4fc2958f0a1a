"""Helpers shared by the Spark tests: the server-process helpers of tests/server (loaded
under another module name, as several folders have a ``conftest`` module), table names
and deltalake writes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
from deltalake import write_deltalake
from pyspark.errors import StreamingQueryException
from pyspark.sql import DataFrame, SparkSession

import sharing_server as server_process

CORPUS_TABLES = (
    "dat__all_primitive_types",
    "dat__nested_types",
    "golden__basic-decimal-table",
    "golden__data-reader-map",
    "dat__multi_partitioned_2",
    "golden__data-reader-timestamp_ntz",
    "golden__dv-with-columnmapping",
    "golden__dv-partitioned-with-checkpoint",
    "golden-krs__table-with-columnmapping-mode-name",
)
"""A representative subset: primitives, nesting, decimals, maps, partition values with
nulls and special characters, timestamp_ntz, deletion vectors and column mapping."""


STREAM_TABLES = ("snap", "grow", "deletes", "polled", "compacted")
"""Tables of three appends (ids 0-5, two per commit) that streaming tests read and write."""


TOKEN: str = server_process.TOKEN


def append(root: Path, ids: range, *, mode: str = "append") -> None:
    """Write rows ``ids`` (columns id: long, name: string) with deltalake."""
    data = pa.table(
        {
            "id": pa.array(list(ids), pa.int64()),
            "name": pa.array([f"n{i}" for i in ids]),
        }
    )
    write_deltalake(
        str(root), data, mode=mode, configuration={"delta.enableChangeDataFeed": "true"}
    )


def table_url(profile: str, name: str) -> str:
    return f"{profile}#s.d.{name.replace('-', '_')}"


def flat(batches: list[list[Any]]) -> list[Any]:
    return [row for batch in batches for row in batch]


def run_available_now(
    spark: SparkSession, url: str, checkpoint: Path, **options: str
) -> list[list[Any]]:
    """The stream run with Trigger.AvailableNow: the sorted rows of each non-empty batch
    (ids, or (id, change type, version) with readChangeFeed)."""
    batches: list[list[Any]] = []
    cdf = options.get("readChangeFeed") == "true"

    def collect(df: DataFrame, batch_id: int) -> None:
        rows = df.collect()
        if cdf:
            got: list[Any] = sorted((r.id, r._change_type, r._commit_version) for r in rows)
        else:
            got = sorted(r.id for r in rows)
        if got:
            batches.append(got)

    query = (
        spark.readStream.format("deltaSharing")
        .options(**options)
        .load(url)
        .writeStream.foreachBatch(collect)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    try:
        query.awaitTermination(180)
    except StreamingQueryException as exc:
        raise RuntimeError(str(exc)) from exc
    return batches
