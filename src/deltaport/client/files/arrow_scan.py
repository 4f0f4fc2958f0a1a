"""What every scan offers once it streams record batches: Arrow, pandas, polars and Spark,
under deltaport's names and under those of the official client's table API
(``to_record_batches``, ``to_record_batch_reader``, ``to_spark``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pyarrow as pa

from deltaport.client.files.spark_load import SparkLoad
from deltaport.read import EncodedBatch

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl
    from pyspark.sql import DataFrame


class ArrowScan(ABC):
    spark_load: SparkLoad | None = None
    """The same read through Spark's ``deltaSharing`` source (set by the table handle)."""

    @property
    @abstractmethod
    def schema(self) -> pa.Schema: ...

    @abstractmethod
    def encoded_batches(self) -> Iterator[EncodedBatch]:
        """The rows as record batches in file order, each with the encoding of the file it
        comes from (what the official client's conversion to pandas follows)."""

    def to_batches(self) -> Iterator[pa.RecordBatch]:
        return (item.batch for item in self.encoded_batches())

    def to_record_batches(self) -> Iterator[pa.RecordBatch]:
        """The official client's name of [`to_batches`][deltaport.client.TableScan.to_batches]."""
        return self.to_batches()

    def to_record_batch_reader(self) -> pa.RecordBatchReader:
        """The rows as a stream: files are read as the reader is consumed, a bounded
        number ahead, so memory stays bounded whatever the table's size."""
        return pa.RecordBatchReader.from_batches(self.schema, self.to_batches())

    def to_arrow(self) -> pa.Table:
        return pa.Table.from_batches(list(self.to_batches()), schema=self.schema)

    def to_spark(self) -> DataFrame:
        """The same read as a Spark DataFrame (needs pyspark)."""
        if self.spark_load is None:
            raise ValueError("this scan was not made by a table handle: it has no Spark source")
        return self.spark_load.load()

    def to_pandas(self, convert_in_batches: bool = False) -> pd.DataFrame:
        """pandas' conversion of the Arrow table; ``convert_in_batches`` is accepted for
        compatibility with the official client (files are always read batch by batch)."""
        # pyarrow's default conversion, straight into consolidated blocks. Freeing the Arrow
        # buffers column by column (self_destruct) halves the peak memory but measured
        # several times slower on a 1 GB table: the freed memory is handed back to the
        # system and faulted in again for the next column (benchmarks/bench_client.py).
        frame: pd.DataFrame = self.to_arrow().to_pandas()
        return frame

    def to_polars(self) -> pl.DataFrame:
        import polars as pl

        frame = pl.from_arrow(self.to_arrow())
        assert isinstance(frame, pl.DataFrame)
        return frame
