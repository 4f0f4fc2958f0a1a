"""The row diff on one machine, with Arrow, within a memory budget.

When the rows to compare fit the budget (judged from the files' sizes), both sides are
read and compared at once. Otherwise they are split into ranges of the partitioning column
(the first key column, or with whole rows the first column that orders): a first pass reads
only that column to find range bounds holding about a budget's worth of rows each, a
second pass writes each side's rows into one Parquet file per range in a temporary
directory, and the ranges are compared one after another. Rows that are equal (with a key:
rows with the same key) fall into the same range, so the ranges' answers are the answer.
"""

from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from deltaport.diff.base.errors import DiffError
from deltaport.diff.rows.row_compare import change_schema, compare_by_key, compare_rows
from deltaport.diff.rows.row_reading import read_side, side_batches
from deltaport.diff.rows.row_schema import ComparedSchema
from deltaport.diff.rows.row_sources import AnySide, RowDiffInput
from deltaport.protocol.predicates import Expr

DEFAULT_MEMORY_BUDGET = 1024**3
ROWS_PER_FILE_BYTE = 4
"""How much bigger rows are in memory than in their Parquet files, for the estimate."""


@dataclass(frozen=True)
class RowDiffJob:
    """What an engine compares: the sides' files, the compared schema, the filter, the key
    (empty: whole rows) and the memory budget in bytes."""

    sides: RowDiffInput
    schema: ComparedSchema
    where: Expr | None
    memory_budget: int = DEFAULT_MEMORY_BUDGET

    @property
    def estimated_bytes(self) -> int:
        sizes = (side.files.column("size") for side in (self.sides.left, self.sides.right))
        return ROWS_PER_FILE_BYTE * sum(int(pc.sum(s).as_py() or 0) for s in sizes)


@dataclass(frozen=True)
class EngineResult:
    changes: pa.Table
    ranges: int
    """How many key ranges the rows were split into (1: compared at once)."""


class ArrowRowEngine:
    name: ClassVar[str] = "arrow"

    def compare(self, job: RowDiffJob) -> EngineResult:
        ranges = max(1, math.ceil(job.estimated_bytes / max(1, job.memory_budget)))
        if ranges == 1:
            left = read_side(job.sides.left, job.schema, job.where)
            right = read_side(job.sides.right, job.schema, job.where)
            return EngineResult(_compare(left, right, job.schema), 1)
        return EngineResult(_compare_in_ranges(job, ranges * 2), ranges * 2)


def _compare(left: pa.Table, right: pa.Table, schema: ComparedSchema) -> pa.Table:
    if schema.key:
        return compare_by_key(left, right, schema.key)
    return compare_rows(left, right)


def _compare_in_ranges(job: RowDiffJob, ranges: int) -> pa.Table:
    column = _partition_column(job.schema)
    bounds = _bounds(job, column, ranges)
    parts = []
    with tempfile.TemporaryDirectory(prefix="deltaport-diff-") as tmp:
        left = _spill(job, job.sides.left, column, bounds, Path(tmp) / "left")
        right = _spill(job, job.sides.right, column, bounds, Path(tmp) / "right")
        for i in range(len(bounds) + 1):
            parts.append(_compare(_load(left, i, job), _load(right, i, job), job.schema))
    return (
        pa.concat_tables(parts)
        if parts
        else change_schema(job.schema.schema, job.schema.key).empty_table()
    )


def _partition_column(schema: ComparedSchema) -> str:
    candidates = schema.key or schema.columns
    for name in candidates[:1] if schema.key else candidates:
        data_type = schema.schema.field(name).type
        if not (pa.types.is_nested(data_type) or pa.types.is_dictionary(data_type)):
            return name
    raise DiffError(
        "the rows do not fit the memory budget and no column orders them into ranges "
        "(a key or a column of a scalar type is needed): raise --memory-budget"
    )


def _bounds(job: RowDiffJob, column: str, ranges: int) -> pa.Array:
    """Range bounds: values of ``column`` splitting both sides' rows into ``ranges`` parts."""
    values = []
    for side in (job.sides.left, job.sides.right):
        values += [
            batch.column(column)
            for batch in side_batches(side, side.files, _only(job.schema, column), job.where)
        ]
    if not values:
        return pa.array([], job.schema.schema.field(column).type)
    everything = pa.chunked_array(values).drop_null()
    ordered = everything.take(pc.sort_indices(everything))
    step = len(ordered) / ranges
    picks = sorted({int(step * i) for i in range(1, ranges) if int(step * i) < len(ordered)})
    return pc.unique(ordered.take(pa.array(picks, pa.int64()))) if picks else ordered.slice(0, 0)


def _only(schema: ComparedSchema, column: str) -> ComparedSchema:
    field = schema.schema.field(column)
    return ComparedSchema(pa.schema([field]), (), (), (), ())


def _range_of(values: pa.Array, bounds: pa.Array) -> np.ndarray:
    """The range index of each value (nulls in range 0): the number of bounds <= it."""
    if len(bounds) == 0:
        return np.zeros(len(values), dtype=np.int64)
    index = np.zeros(len(values), dtype=np.int64)
    for bound in bounds:
        index += np.asarray(pc.fill_null(pc.greater_equal(values, bound), False))
    return index


def _spill(
    job: RowDiffJob, side: AnySide, column: str, bounds: pa.Array, folder: Path
) -> list[Path]:
    folder.mkdir()
    paths = [folder / f"range-{i}.parquet" for i in range(len(bounds) + 1)]
    writers = [pq.ParquetWriter(p, job.schema.schema) for p in paths]
    try:
        for batch in side_batches(side, side.files, job.schema, job.where):
            index = _range_of(batch.column(column), bounds)
            for i in np.unique(index):
                writers[int(i)].write_batch(batch.filter(pa.array(index == i)))
    finally:
        for writer in writers:
            writer.close()
    return paths


def _load(paths: list[Path], i: int, job: RowDiffJob) -> pa.Table:
    return pq.read_table(paths[i], schema=job.schema.schema)
