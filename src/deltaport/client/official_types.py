"""pandas frames typed as the official ``delta-sharing`` client types them.

The drop-in loaders return these by default so that code written against the official
client keeps working; ``arrow_types=True`` returns pandas' conversion of deltaport's Arrow
table instead (UTC timestamps throughout). See docs/reading.md, "Types".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from deltaport.read.plan import COMMIT_TIMESTAMP_COLUMN

if TYPE_CHECKING:
    import pandas as pd

NAIVE_NS = pa.timestamp("ns")


def official_frame(table: pa.Table, commit_timestamp_ms: bool) -> pd.DataFrame:
    """``table`` as the official client's pandas frame.

    Timestamp columns become naive ``datetime64[ns]`` holding the UTC time, as the official
    client gives for data files written by Spark (INT96); a column with a value outside
    that type's range (years 1678 to 2261) keeps its UTC microseconds rather than wrap.
    With ``commit_timestamp_ms``, ``_commit_timestamp`` becomes int64 epoch milliseconds,
    as the official client gives change data read in the parquet format.
    """
    for index, field in enumerate(table.schema):
        if field.name == COMMIT_TIMESTAMP_COLUMN and commit_timestamp_ms:
            micros = table.column(index).cast(pa.timestamp("us", "UTC")).cast(pa.int64())
            millis = pc.divide(micros, pa.scalar(1000, pa.int64()))
            table = table.set_column(index, field.name, millis)
        elif pa.types.is_timestamp(field.type) and field.type.tz is not None:
            try:
                naive = table.column(index).cast(NAIVE_NS)
            except pa.ArrowInvalid:
                continue  # out of the nanosecond range
            table = table.set_column(index, pa.field(field.name, NAIVE_NS, field.nullable), naive)
    frame: pd.DataFrame = table.to_pandas()
    return frame
