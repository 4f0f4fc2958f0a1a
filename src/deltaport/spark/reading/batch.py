"""Batch reads: ``spark.read.format("deltaSharing").load(...)``."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, Filter, InputPartition

from deltaport.spark.base.options import SharingOptions
from deltaport.spark.reading.directory import (
    DirectoryPartition,
    DirectoryPlan,
    read_directory_files,
    split_directory,
)
from deltaport.spark.reading.file_reading import read_plan_files
from deltaport.spark.reading.filters import filters_to_json
from deltaport.spark.reading.partitions import FilesPartition, split_files
from deltaport.spark.reading.scans import plan_batch


class BatchReader(DataSourceReader):
    """Plans one read: asks the server for the files and hands them to tasks in
    byte-balanced partitions."""

    def __init__(self, options: SharingOptions, schema: pa.Schema) -> None:
        self.options = options
        self.schema = schema
        self.predicate: str | None = None

    def partitions(self) -> Sequence[InputPartition]:
        plan = plan_batch(self.options, self.predicate)
        if isinstance(plan, DirectoryPlan):
            return split_directory(plan, self.options.partition_bytes, self.options.min_partitions)
        return split_files(plan, self.options.partition_bytes, self.options.min_partitions)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if isinstance(partition, DirectoryPartition):
            return read_directory_files(partition.plan, self.options, self.schema)
        if not isinstance(partition, FilesPartition):
            return iter(())  # Spark's stand-in partition when a scan has no files
        return read_plan_files(partition.plan, self.options.profile, self.schema)


class HintingBatchReader(BatchReader):
    """A batch reader that sends Spark's filters to the server as ``jsonPredicateHints``
    so it can skip files (``jsonPredicateHints=true``; Spark needs
    ``spark.sql.python.filterPushdown.enabled=true`` for readers that take filters).

    Spark 4.1-4.3 keep the reader planned for the last filtered query of a DataFrame and
    reuse it for later queries of that DataFrame that have no filter to push: with hints
    on, build a new DataFrame (``spark.read...load()``) per differently filtered query.
    """

    def pushFilters(self, filters: list[Filter]) -> Iterable[Filter]:
        """Keep a hint of the filters; all of them are still evaluated by Spark."""
        self.predicate = filters_to_json(filters, self.schema)
        return list(filters)


def batch_reader(options: SharingOptions, schema: pa.Schema) -> BatchReader:
    """The reader for the options: Spark refuses readers that take filters unless filter
    pushdown is enabled, so only readers asked for hints take them."""
    if options.json_predicate_hints and not options.read_change_feed:
        return HintingBatchReader(options, schema)
    return BatchReader(options, schema)
