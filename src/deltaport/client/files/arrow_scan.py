"""What every scan offers once it streams record batches: Arrow, pandas and polars."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pyarrow as pa

from deltaport.read import EncodedBatch

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl


class ArrowScan(ABC):
    @property
    @abstractmethod
    def schema(self) -> pa.Schema: ...

    @abstractmethod
    def encoded_batches(self) -> Iterator[EncodedBatch]:
        """The rows as record batches in file order, each with the encoding of the file it
        comes from (what the official client's conversion to pandas follows)."""

    def to_batches(self) -> Iterator[pa.RecordBatch]:
        return (item.batch for item in self.encoded_batches())

    def to_arrow(self) -> pa.Table:
        return pa.Table.from_batches(list(self.to_batches()), schema=self.schema)

    def to_pandas(self) -> pd.DataFrame:
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
