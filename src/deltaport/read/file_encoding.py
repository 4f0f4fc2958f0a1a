"""How one data file holds the columns of a read, before they are cast to the table schema.

deltaport casts every file to the table's types. A reader that converts each file on its
own, as the official ``delta-sharing`` client's parquet path does (pyarrow's default reading
of the file, then pandas), gets types that follow the file's writer instead: Spark's INT96
timestamps as naive nanoseconds, delta-rs's UTC-adjusted ones as zoned microseconds, a
column the file lacks as ``None``, a partition value as pandas parses its string. The
encoding travels beside each file's batches so that the client can type its pandas frames
the same way (``deltaport.client.official_types``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

import pyarrow as pa
import pyarrow.parquet as pq

from deltaport.read.column_mapping import find_file_field
from deltaport.read.plan import ReadPlan

INT96_AS_READ = pa.timestamp("ns")
"""What pyarrow reads an INT96 timestamp as by default (deltaport reads microseconds)."""


@dataclass(frozen=True)
class FileEncoding:
    """The file's own types for the output columns of one read."""

    stored: Mapping[str, pa.DataType]
    """Output column -> the type pyarrow reads from the file by default, for the top-level
    data columns the file holds."""
    absent: frozenset[str]
    """Data columns the file lacks (added to the table after it was written): their rows
    are nulls."""
    partition_values: Mapping[str, str | None]
    """Partition column -> its value as the file action serialises it."""


class EncodedBatch(NamedTuple):
    """A record batch of the read's schema, and the encoding of the file it comes from."""

    batch: pa.RecordBatch
    encoding: FileEncoding


def file_encoding(
    parquet: pq.ParquetFile,
    file_schema: pa.Schema,
    plan: ReadPlan,
    partition_values: Mapping[str, str | None],
) -> FileEncoding:
    """The encoding of ``parquet`` (whose Arrow schema is ``file_schema``) for ``plan``;
    ``partition_values`` are the file action's serialised values keyed by logical name."""
    file_fields = list(file_schema)
    by_name = {f.name: f for f in file_fields} if plan.mode == "none" else {}
    stored: dict[str, pa.DataType] = {}
    absent = set()
    for field in plan.data_fields:
        file_field = by_name.get(field.name)  # the common case, without a search
        if file_field is None:
            index = find_file_field(file_fields, field, plan.mode)
            if index is None:
                absent.add(field.name)
                continue
            file_field = file_fields[index]
        stored[field.name] = file_field.type
        if pa.types.is_timestamp(file_field.type) and _is_int96(parquet, file_field.name):
            stored[field.name] = INT96_AS_READ
    return FileEncoding(stored, frozenset(absent), dict(partition_values))


def _is_int96(parquet: pq.ParquetFile, column: str) -> bool:
    schema = parquet.schema
    for i in range(len(schema)):
        leaf = schema.column(i)
        if leaf.path == column:
            return bool(leaf.physical_type == "INT96")
    return False
