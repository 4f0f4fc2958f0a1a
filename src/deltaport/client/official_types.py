"""pandas frames typed as the official ``delta-sharing`` client (1.4.2) types them.

The drop-in loaders return these by default so that code written against the official
client keeps working; ``arrow_types=True`` returns pandas' conversion of deltaport's Arrow
table instead (UTC timestamps throughout). See docs/reading.md, "Types".

The official client's parquet path converts each data file on its own (pyarrow's default
reading of the file, then pandas) and concatenates the frames with ``pd.concat``, so its
dtypes follow each file's writer. deltaport reads every file into the table's types, and
the reader hands each file's own encoding up beside its batches
([`FileEncoding`][deltaport.read.FileEncoding]): the rows of each run of files that the
official client would type alike are cast back to those types and converted at once, and
the runs concatenated as pandas 2 concatenates its files' frames
(``deltaport.client.official_concat``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, TypeAlias

import pyarrow as pa
import pyarrow.compute as pc

from deltaport.client.official_concat import concat_as_pandas_2
from deltaport.read import EncodedBatch, FileEncoding
from deltaport.read.plan import COMMIT_TIMESTAMP_COLUMN

if TYPE_CHECKING:
    import pandas as pd

NAIVE_NS = pa.timestamp("ns")
"""The official client's type for a timestamp it has no file for (an empty result, a null
partition value): pandas' ``datetime64[ns]``."""

Targets: TypeAlias = tuple[pa.DataType | None, ...]
"""The type each output column is cast to before the conversion; None: all ``None``
(an object column), as for a file that lacks the column."""

_FRACTION = re.compile(r":\d\d\.(\d+)")
_ZONE = re.compile(r"(Z|([+-])(\d\d):?(\d\d)?)$")


def official_frame(
    batches: Iterable[EncodedBatch], schema: pa.Schema, *, commit_timestamp_ms: bool
) -> pd.DataFrame:
    """The rows of ``batches`` (of ``schema``) as the official client's pandas frame.

    Each column takes the type its file holds it in (Spark's INT96 timestamps: naive
    nanoseconds holding the UTC time; delta-rs's: zoned microseconds), or ``None`` where
    its file lacks it; a timestamp partition column takes the unit and zone pandas 2
    infers from the serialised value. A timestamp that its file's type cannot hold (outside
    ``datetime64[ns]``'s years 1678 to 2261) keeps the table's zoned microseconds rather
    than wrap. With ``commit_timestamp_ms``, ``_commit_timestamp`` is int64 epoch
    milliseconds, as the official client gives change data read in the parquet format.
    """
    runs: list[tuple[Targets, list[pa.RecordBatch]]] = []
    last: FileEncoding | None = None  # a file's batches come together: one look each
    targets: Targets = ()
    for batch, encoding in batches:
        if encoding is not last:
            last, targets = encoding, _targets(encoding, schema)
        if runs and runs[-1][0] == targets:
            runs[-1][1].append(batch)
        else:
            runs.append((targets, [batch]))
    if not runs:
        return _frame(schema.empty_table(), _empty_targets(schema), commit_timestamp_ms)
    frames = [
        _frame(pa.Table.from_batches(run, schema), targets, commit_timestamp_ms)
        for targets, run in runs
    ]
    return frames[0] if len(frames) == 1 else concat_as_pandas_2(frames)


def whole_second_commit_times(table: pa.Table) -> pa.Table:
    """``table`` with ``_commit_timestamp`` cut to whole seconds, as the official client's
    delta-format change data has it (it replays the feed through log files whose
    modification times it sets in seconds)."""
    index = table.schema.get_field_index(COMMIT_TIMESTAMP_COLUMN)
    if index < 0:
        return table
    field = table.schema.field(index)
    seconds = table.column(index).cast(pa.timestamp("s", field.type.tz), safe=False)
    return table.set_column(index, field, seconds.cast(field.type))


def _targets(encoding: FileEncoding, schema: pa.Schema) -> Targets:
    targets: list[pa.DataType | None] = []
    for field in schema:
        name = field.name
        if name in encoding.partition_values:
            raw = encoding.partition_values[name]
            timestamp = pa.types.is_timestamp(field.type)
            targets.append(_partition_timestamp_type(raw) if timestamp else field.type)
        elif name in encoding.absent:
            targets.append(None)
        elif name in encoding.stored and not pa.types.is_nested(field.type):
            targets.append(encoding.stored[name])
        else:
            targets.append(field.type)
    return tuple(targets)


def _empty_targets(schema: pa.Schema) -> Targets:
    """For no rows the official client builds the frame from the schema: a timestamp is
    ``datetime64[ns]``."""
    return tuple(
        NAIVE_NS if pa.types.is_timestamp(f.type) and f.type.tz is not None else f.type
        for f in schema
    )


def _partition_timestamp_type(raw: str | None) -> pa.DataType:
    """The type of ``pd.Timestamp(raw)`` under pandas 2 (the official client's): the unit
    its fraction's digits need (seconds without one), the zone it names."""
    text = (raw or "").strip()
    if not text:
        return NAIVE_NS  # pd.NaT
    fraction = _FRACTION.search(text)
    digits = len(fraction.group(1)) if fraction else 0
    unit = "s" if digits == 0 else "ms" if digits <= 3 else "us"  # Delta writes at most us
    zone = _ZONE.search(text)
    if zone is None:
        return pa.timestamp(unit)
    sign, hours, minutes = zone.group(2), zone.group(3), zone.group(4) or "00"
    if zone.group(1) == "Z":
        return pa.timestamp(unit, "UTC")
    return pa.timestamp(unit, f"{sign}{hours}:{minutes}")


def _frame(table: pa.Table, targets: Targets, commit_timestamp_ms: bool) -> pd.DataFrame:
    for index, (field, target) in enumerate(zip(table.schema, targets, strict=True)):
        column = table.column(index)
        if field.name == COMMIT_TIMESTAMP_COLUMN and commit_timestamp_ms:
            micros = column.cast(pa.timestamp("us", "UTC")).cast(pa.int64())
            millis = pc.divide(micros, pa.scalar(1000, pa.int64()))
            table = table.set_column(index, field.name, millis)
        elif target is None:
            table = table.set_column(index, field.name, pa.nulls(len(column)))
        elif target != field.type:
            try:
                cast = column.cast(target)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                continue  # a value the file's type cannot hold: the table's type
            table = table.set_column(index, pa.field(field.name, target, field.nullable), cast)
    frame: pd.DataFrame = table.to_pandas()
    return frame
