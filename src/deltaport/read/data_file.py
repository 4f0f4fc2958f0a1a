"""Reading one data file into record batches of the table's logical schema.

This is the per-file core shared by table scans and by clients that fetched a file
themselves (for example from a pre-signed URL): batches are streamed per row group, deleted
rows dropped, columns mapped to logical names and cast, partition values added.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TypeAlias

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from deltaport.delta.model import Metadata
from deltaport.read.column_mapping import conform_columns, file_columns_for
from deltaport.read.deletion_vectors import RowIndexes, keep_mask
from deltaport.read.file_encoding import FileEncoding, file_encoding
from deltaport.read.partition_values import parse_partition_values
from deltaport.read.plan import CHANGE_TYPE_COLUMN, ReadPlan

DEFAULT_BATCH_SIZE = 65_536

Source: TypeAlias = str | pa.NativeFile | bytes
"""A data file: a local path, an open Arrow file, or its bytes."""


@dataclass(frozen=True)
class ChangeInfo:
    """The CDF columns of one file: ``change_type`` None means the file carries its own
    ``_change_type`` column (a cdc file)."""

    commit_version: int
    commit_timestamp_ms: int
    change_type: str | None


@dataclass(frozen=True)
class RowSelection:
    """Which rows of a file to keep: all but ``deleted``, or only ``selected`` when set."""

    deleted: RowIndexes | None = None
    selected: RowIndexes | None = None

    def mask(self, start: int, length: int) -> np.typing.NDArray[np.bool_] | None:
        if self.selected is not None:
            return ~keep_mask(self.selected, start, length)
        if self.deleted is not None and len(self.deleted):
            return keep_mask(self.deleted, start, length)
        return None


def read_data_file(
    source: Source,
    *,
    metadata: Metadata,
    partition_values: Mapping[str, str | None] | None = None,
    deletion_vector_rows: RowIndexes | None = None,
    columns: Sequence[str] | None = None,
    change: ChangeInfo | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> Iterator[pa.RecordBatch]:
    """Stream one data file as batches of the table's logical schema.

    ``partition_values`` are the file's serialised values as the log or a sharing
    server gives them (keyed by physical or logical name); ``deletion_vector_rows`` are
    the row indexes its deletion vector marks deleted; with ``change`` the CDF columns
    are added.
    """
    plan = ReadPlan.build(metadata, columns=columns, cdf=change is not None)
    values = partition_values or {}
    scalars: dict[str, pa.Scalar] = {}
    for f in plan.partition_fields:
        raw = values.get(f.physical_name, values.get(f.name))
        scalars[f.name] = parse_partition_values(pa.array([raw], pa.string()), f.type)[0]
    return iter_file_batches(
        source,
        plan,
        scalars,
        RowSelection(deleted=deletion_vector_rows),
        change=change,
        batch_size=batch_size,
    )


def iter_file_batches(
    source: Source,
    plan: ReadPlan,
    partition_scalars: Mapping[str, pa.Scalar],
    rows: RowSelection,
    *,
    change: ChangeInfo | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> Iterator[pa.RecordBatch]:
    """Stream one file for a prepared plan with already typed partition values."""
    parquet = _open(source)
    file_schema = parquet.schema_arrow
    yield from _file_batches(
        parquet, file_schema, plan, partition_scalars, rows, change, batch_size
    )


@dataclass(frozen=True)
class FileRows:
    """One opened data file: its encoding, and its batches (decoded as they are taken)."""

    encoding: FileEncoding
    batches: Iterator[pa.RecordBatch]


def open_data_file(
    source: Source,
    plan: ReadPlan,
    partition_scalars: Mapping[str, pa.Scalar],
    rows: RowSelection,
    *,
    partition_values: Mapping[str, str | None],
    change: ChangeInfo | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> FileRows:
    """As [`iter_file_batches`][deltaport.read.iter_file_batches], with the file's own
    encoding of the columns (``partition_values``: the serialised values, by logical
    name). The file's footer is read now."""
    parquet = _open(source)
    file_schema = parquet.schema_arrow  # built anew on each access: once for both
    encoding = file_encoding(parquet, file_schema, plan, partition_values)
    batches = _file_batches(parquet, file_schema, plan, partition_scalars, rows, change, batch_size)
    return FileRows(encoding, batches)


def _open(source: Source) -> pq.ParquetFile:
    if isinstance(source, bytes | bytearray | memoryview):
        source = pa.BufferReader(source)
    # pre-buffering coalesces reads of a slow source on Arrow's I/O threads: for bytes in
    # memory it is only a detour (about 10% of decoding a small file)
    in_memory = isinstance(source, pa.BufferReader)
    return pq.ParquetFile(source, coerce_int96_timestamp_unit="us", pre_buffer=not in_memory)


def _file_batches(
    parquet: pq.ParquetFile,
    file_schema: pa.Schema,
    plan: ReadPlan,
    partition_scalars: Mapping[str, pa.Scalar],
    rows: RowSelection,
    change: ChangeInfo | None,
    batch_size: int,
) -> Iterator[pa.RecordBatch]:
    layout = _layout(file_schema, plan, change)
    to_read = None
    if layout is _Layout.ASSEMBLED:
        to_read = file_columns_for(file_schema, plan.data_fields, plan.mode)
        if change is not None and change.change_type is None:
            to_read.append(CHANGE_TYPE_COLUMN)
    if parquet.metadata.num_rows <= batch_size:  # one read: no batch iterator to set up
        batches = parquet.read(columns=to_read, use_threads=False).to_batches()
    else:
        batches = parquet.iter_batches(batch_size=batch_size, columns=to_read, use_threads=False)
    start = 0
    for batch in batches:
        length = batch.num_rows
        mask = rows.mask(start, length)
        start += length
        if mask is not None:
            batch = batch.filter(pa.array(mask))
        if not batch.num_rows:
            continue
        if layout is _Layout.AS_IS:
            yield batch
        elif layout is _Layout.RELABELLED:
            yield pa.RecordBatch.from_arrays(batch.columns, schema=plan.schema)
        else:
            yield _assemble(batch, plan, partition_scalars, change)


class _Layout(Enum):
    """How a file's batches become output batches, decided once per file."""

    AS_IS = "the file's schema is the output schema, metadata included"
    RELABELLED = "the file's columns are the output's but for nullability or metadata"
    ASSEMBLED = "columns matched, cast and added one by one"


def _layout(file_schema: pa.Schema, plan: ReadPlan, change: ChangeInfo | None) -> _Layout:
    """The layout of a file of ``file_schema``: in the common case of a file written with
    the table's schema, its batches need no per-column work (checked once per file, which
    matters for tables of many small files)."""
    if change is not None or plan.cdf or plan.partition_fields or plan.mode == "id":
        return _Layout.ASSEMBLED
    if file_schema.equals(plan.schema, check_metadata=True):
        return _Layout.AS_IS
    if _holds_output_columns(file_schema, plan):
        return _Layout.RELABELLED
    return _Layout.ASSEMBLED


def _assemble(
    batch: pa.RecordBatch,
    plan: ReadPlan,
    partition_scalars: Mapping[str, pa.Scalar],
    change: ChangeInfo | None,
) -> pa.RecordBatch:
    n = batch.num_rows
    if not len(plan.schema):
        return batch.select([])  # keeps the row count: counting reads no column data
    data = dict(
        zip(
            (f.name for f in plan.data_fields),
            conform_columns(batch, plan.data_fields, plan.mode),
            strict=True,
        )
    )
    arrays = []
    for out_field in plan.schema:
        name = out_field.name
        if name in data:
            arrays.append(data[name])
        elif name in partition_scalars:
            arrays.append(pa.repeat(partition_scalars[name], n))
        elif change is not None:
            arrays.append(_change_column(name, batch, change, out_field.type))
        else:
            arrays.append(pa.nulls(n, out_field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=plan.schema)


def _holds_output_columns(file_schema: pa.Schema, plan: ReadPlan) -> bool:
    """Whether the file's columns are the output's, in order, named and typed as the
    table says (nullability and metadata aside)."""
    if len(file_schema) != len(plan.data_fields):
        return False
    for file_field, field, out in zip(file_schema, plan.data_fields, plan.schema, strict=True):
        name = field.physical_name if plan.mode == "name" else field.name
        if file_field.name != name or file_field.type != out.type:
            return False
    return True


def _change_column(
    name: str, batch: pa.RecordBatch, change: ChangeInfo, arrow_type: pa.DataType
) -> pa.Array:
    n = batch.num_rows
    if name == CHANGE_TYPE_COLUMN:
        if change.change_type is None:
            return batch.column(CHANGE_TYPE_COLUMN).cast(arrow_type)
        return pa.repeat(pa.scalar(change.change_type, arrow_type), n)
    if pa.types.is_timestamp(arrow_type):
        micros = change.commit_timestamp_ms * 1000
        return pa.repeat(pa.scalar(micros, pa.int64()), n).cast(arrow_type)
    return pa.repeat(pa.scalar(change.commit_version, arrow_type), n)
