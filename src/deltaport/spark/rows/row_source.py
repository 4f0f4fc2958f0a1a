"""One side of a row diff as a Spark DataFrame, read inside Spark tasks by deltaport's
reader: a Python data source whose input partitions are groups of the side's files.

Spark builds a Python data source from string options in a Python worker of its own (not
the driver's process), so everything a task needs travels in one option: the table's
storage root and options, its metadata, the compared schema, the filter and the file rows,
pickled. Each task rebuilds the table's storage and calls
``deltaport.diff.rows.row_reading.file_batches`` on its files.
"""

from __future__ import annotations

import base64
import heapq
import pickle
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from deltaport.delta.model import Metadata
from deltaport.diff.rows.row_reading import file_batches
from deltaport.diff.rows.row_schema import ComparedSchema
from deltaport.diff.rows.row_sources import RowSide
from deltaport.protocol.predicates import Expr
from deltaport.spark.base.types import spark_schema
from deltaport.spark.reading.file_reading import conform
from deltaport.storage import Location, Storage

FORMAT_NAME = "deltaportRowDiffSide"
_OPTION = "side"
PARTITION_BYTES = 64 * 1024 * 1024
"""Parquet bytes per task, before the minimum number of tasks splits them further."""


@dataclass(frozen=True)
class SideRead:
    """What the tasks reading one side need (picklable: no snapshot, no open store)."""

    root: Location
    storage_options: dict[str, str]
    metadata: Metadata
    schema: ComparedSchema
    where: Expr | None
    files: pa.Table
    min_partitions: int

    def encode(self) -> str:
        return base64.b64encode(zlib.compress(pickle.dumps(self), 1)).decode()

    @staticmethod
    def decode(text: str) -> SideRead:
        decoded = pickle.loads(zlib.decompress(base64.b64decode(text)))
        if not isinstance(decoded, SideRead):
            raise TypeError(f"not a row diff side: {type(decoded).__name__}")
        return decoded


def side_frame(
    spark: SparkSession, side: RowSide, schema: ComparedSchema, where: Expr | None
) -> DataFrame:
    """The rows of ``side``'s files (those the diff reads), as ``schema``'s columns."""
    spark.dataSource.register(RowDiffSideSource)
    read = SideRead(
        side.storage.root,
        dict(side.storage.options),
        side.snapshot.metadata,
        schema,
        where,
        side.files,
        spark.sparkContext.defaultParallelism,
    )
    return spark.read.format(FORMAT_NAME).option(_OPTION, read.encode()).load()


class RowDiffSideSource(DataSource):
    """The data source ``side_frame`` reads through (not for direct use)."""

    @classmethod
    def name(cls) -> str:
        return FORMAT_NAME

    def schema(self) -> StructType:
        return spark_schema(self._read().schema.schema)

    def reader(self, schema: StructType) -> DataSourceReader:
        return SideReader(self._read())

    def _read(self) -> SideRead:
        return SideRead.decode(self.options[_OPTION])


class FileGroup(InputPartition):
    """The files (rows of the side's file table) one task reads."""

    def __init__(self, files: pa.Table) -> None:
        super().__init__(files.num_rows)
        self.files = files


class SideReader(DataSourceReader):
    def __init__(self, read: SideRead) -> None:
        self.side = read

    def partitions(self) -> Sequence[InputPartition]:
        files = self.side.files
        groups = size_groups(files.column("size").to_pylist(), self.side.min_partitions)
        return [FileGroup(files.take(pa.array(group, pa.int64()))) for group in groups]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, FileGroup):
            return iter(())  # Spark's stand-in partition when a side has no files
        side = self.side
        storage = Storage(side.root, side.storage_options)
        arrow_schema = side.schema.schema
        batches = file_batches(partition.files, side.metadata, storage, side.schema, side.where)
        return (conform(batch, arrow_schema) for batch in batches)


def size_groups(sizes: Sequence[int], min_groups: int) -> list[list[int]]:
    """Indexes of ``sizes`` in groups of about ``PARTITION_BYTES`` each, at least
    ``min_groups`` of them when there are enough files; the largest file goes first into
    the lightest group, and each group keeps its files in order."""
    if not sizes:
        return []
    count = max(-(-sum(sizes) // PARTITION_BYTES), min(min_groups, len(sizes)), 1)
    members: list[list[int]] = [[] for _ in range(min(count, len(sizes)))]
    heap = [(0, g) for g in range(len(members))]
    for i in sorted(range(len(sizes)), key=lambda i: sizes[i], reverse=True):
        load, lightest = heapq.heappop(heap)
        members[lightest].append(i)
        heapq.heappush(heap, (load + sizes[i], lightest))
    return [sorted(group) for group in members if group]
