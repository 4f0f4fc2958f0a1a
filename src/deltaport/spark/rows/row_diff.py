"""The row diff on Spark: [`SparkRowEngine`][deltaport.spark.SparkRowEngine] (``deltaport diff
--rows --engine spark``) and [`diff_rows`][deltaport.spark.diff_rows], which returns the changes as
DataFrames.

The driver finds the files each side reads and the compared schema exactly as the Arrow
engine does (``deltaport.diff.rows.row_diff.row_diff_job``); Spark tasks read those files with
deltaport's reader (``deltaport.spark.rows.row_source``) and Spark compares the rows
(``deltaport.spark.rows.row_join``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import ClassVar

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from deltaport.diff.base.errors import DiffError
from deltaport.diff.rows.arrow_engine import EngineResult, RowDiffJob
from deltaport.diff.rows.row_compare import DELETED, INSERTED, UPDATED, change_schema
from deltaport.diff.rows.row_diff import RowDiffSummary, row_diff_job, summary_of_counts
from deltaport.diff.rows.shared_side import SharedRowSide
from deltaport.spark.rows.row_join import compare_by_key, compare_rows
from deltaport.spark.rows.row_source import side_frame

ENGINE_NAME = "spark"


@dataclass(frozen=True)
class SparkRowDiff:
    """A row diff computed by Spark: the summary (counted by one Spark job) and the
    changes as DataFrames, not collected. Each DataFrame reads the changed files again
    when it runs: ``persist()`` ``changes`` first to run several of them."""

    summary: RowDiffSummary
    changes: DataFrame
    """Every change, with the columns of ``deltaport.diff.rows.row_compare.change_schema``,
    unordered."""

    @property
    def inserted(self) -> DataFrame:
        return self.changes.where(F.col("change") == INSERTED)

    @property
    def deleted(self) -> DataFrame:
        return self.changes.where(F.col("change") == DELETED)

    @property
    def updated(self) -> DataFrame:
        return self.changes.where(F.col("change") == UPDATED)


def diff_rows(
    spark: SparkSession,
    left: str,
    right: str,
    *,
    key: Sequence[str] | None = None,
    columns: Sequence[str] | None = None,
    where: str | None = None,
    left_version: int | None = None,
    right_version: int | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> SparkRowDiff:
    """The rows inserted, deleted and updated from ``left`` to ``right`` (table URIs, or
    one table at two versions), compared by ``key`` or as whole rows, in ``spark``.

    The arguments mean what they mean for
    [`deltaport.diff.diff_rows`][deltaport.diff.diff_rows]. Only the files that differ since
    the tables' common version are read, inside Spark tasks.
    """
    job = row_diff_job(
        left,
        right,
        key=key,
        columns=columns,
        where=where,
        left_version=left_version,
        right_version=right_version,
        storage_options=storage_options,
    )
    changes = changes_frame(spark, job)
    with _key_errors():
        counted = changes.groupBy("change").count().collect()
    counts = {row["change"]: row["count"] for row in counted}
    return SparkRowDiff(summary_of_counts(job, counts, ENGINE_NAME, 1), changes)


def changes_frame(spark: SparkSession, job: RowDiffJob) -> DataFrame:
    """The change table of ``job`` as a lazy DataFrame."""
    sides = job.sides.left, job.sides.right
    if isinstance(sides[0], SharedRowSide) or isinstance(sides[1], SharedRowSide):
        raise DiffError(
            "the Spark engine reads tables in storage; a shared table is diffed with the "
            "Arrow engine (--engine arrow)"
        )
    left = side_frame(spark, sides[0], job.schema, job.where)
    right = side_frame(spark, sides[1], job.schema, job.where)
    if job.schema.key:
        return compare_by_key(left, right, job.schema.key)
    return compare_rows(left, right)


class SparkRowEngine:
    """Compares the rows on the active SparkSession (or a new local one) and collects the
    change table, ordered by key as the Arrow engine orders it."""

    name: ClassVar[str] = ENGINE_NAME

    def compare(self, job: RowDiffJob) -> EngineResult:
        spark = active_session()
        with _key_errors():
            collected = changes_frame(spark, job).toArrow()
        schema = change_schema(job.schema.schema, job.schema.key)
        changes = _conform(collected, schema)
        if job.schema.key:
            changes = changes.take(_key_order(changes, job.schema.key))
        return EngineResult(changes, 1)


def active_session() -> SparkSession:
    """The active SparkSession, or a local one whose Python workers run this Python
    (which has deltaport)."""
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    return SparkSession.builder.appName("deltaport-diff").getOrCreate()


@contextmanager
def _key_errors() -> Iterator[None]:
    """Turns the failure a repeated key raises in Spark into the Arrow engine's error."""
    try:
        yield
    except PySparkException as exc:
        text = str(exc)
        if "is not unique in the" not in text:
            raise
        raise DiffError("the key " + text.split("the key ", 1)[1].split("\n", 1)[0]) from None


def _conform(collected: pa.Table, schema: pa.Schema) -> pa.Table:
    """The collected table in the change table's exact types (Spark hands back its own:
    timestamps in the session's zone, large or plain strings); an empty struct key, which
    Spark cannot hand back, is rebuilt."""
    arrays = []
    for field in schema:
        if field.name == "key" and field.type.num_fields == 0:
            arrays.append(pa.nulls(collected.num_rows, field.type))
        else:
            arrays.append(collected.column(field.name).cast(field.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def _key_order(changes: pa.Table, key: Sequence[str]) -> pa.Array:
    keys = changes.column("key").combine_chunks()
    table = pa.table({k: pc.struct_field(keys, k) for k in key})
    return pc.sort_indices(table, sort_keys=[(k, "ascending") for k in key])
