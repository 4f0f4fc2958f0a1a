"""Reading the files of a file table (a snapshot's or a change range's) as record batches."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa

from deltaport.delta.model import DeletionVector, Metadata
from deltaport.read.change_data import change_info, row_selections
from deltaport.read.data_file import DEFAULT_BATCH_SIZE, RowSelection, Source, open_data_file
from deltaport.read.deletion_vectors import RowIndexes, load_deletion_vector
from deltaport.read.file_encoding import EncodedBatch
from deltaport.read.partition_values import partition_columns, serialised_values
from deltaport.read.plan import ReadPlan
from deltaport.read.prefetch import ordered_map
from deltaport.storage import Storage, resolve_log_path

REMOTE_PREFETCH = 4
"""Files fetched ahead when reading from an object store."""


def read_files(
    files: pa.Table,
    metadata: Metadata,
    storage: Storage,
    *,
    columns: Sequence[str] | None = None,
    cdf: bool = False,
    limit: int | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    prefetch: int | None = None,
) -> Iterator[pa.RecordBatch]:
    """Stream the rows of ``files`` (FILE_SCHEMA, or CHANGE_SCHEMA with ``cdf``) in file
    order, one row group at a time; stops after ``limit`` rows.

    ``prefetch`` files are fetched ahead in background threads (default: none on local
    disk, ``REMOTE_PREFETCH`` on object stores, where each is read into memory).
    """
    encoded = read_encoded_files(
        files,
        metadata,
        storage,
        columns=columns,
        cdf=cdf,
        batch_size=batch_size,
        prefetch=prefetch,
    )
    batches = (item.batch for item in encoded)
    return _limited(batches, limit) if limit is not None else batches


def read_encoded_files(
    files: pa.Table,
    metadata: Metadata,
    storage: Storage,
    *,
    columns: Sequence[str] | None = None,
    cdf: bool = False,
    batch_size: int = DEFAULT_BATCH_SIZE,
    prefetch: int | None = None,
) -> Iterator[EncodedBatch]:
    """As [`read_files`][deltaport.read.read_files] (without a limit), each batch with
    the encoding of the file it comes from."""
    if cdf and "action" not in files.column_names:
        raise ValueError("a change data read needs a file table with CHANGE_SCHEMA")
    plan = ReadPlan.build(metadata, columns=columns, cdf=cdf)
    if prefetch is None:
        prefetch = 0 if storage.root.kind == "local" else REMOTE_PREFETCH
    return _iter_files(files, plan, storage, batch_size, prefetch)


def _iter_files(
    files: pa.Table, plan: ReadPlan, storage: Storage, batch_size: int, prefetch: int
) -> Iterator[EncodedBatch]:
    partitions = partition_columns(
        files.column("partition_values"),
        list(plan.partition_fields),
        physical=plan.mode != "none",
    )
    serialised = files.column("partition_values").to_pylist()
    paths = files.column("path").to_pylist()
    dvs = files.column("deletion_vector").to_pylist()
    selections: list[RowSelection] | None = None
    if plan.cdf:
        selections = row_selections(files, lambda d: _load_dv(d, storage))

    def load(i: int) -> tuple[Source, RowSelection]:
        source = storage.open_input(resolve_log_path(storage.root, paths[i]))
        if selections is not None:
            return source, selections[i]
        return source, RowSelection(deleted=_load_dv(dvs[i], storage))

    for i, (source, rows) in enumerate(
        ordered_map(load, range(len(paths)), workers=prefetch, window=prefetch)
    ):
        change = change_info(files, i) if plan.cdf else None
        scalars = {name: column[i] for name, column in partitions.items()}
        opened = open_data_file(
            source,
            plan,
            scalars,
            rows,
            partition_values=serialised_values(dict(serialised[i] or ()), plan.partition_fields),
            change=change,
            batch_size=batch_size,
        )
        for batch in opened.batches:
            yield EncodedBatch(batch, opened.encoding)


def _load_dv(descriptor: dict[str, Any] | None, storage: Storage) -> RowIndexes | None:
    if not descriptor or not descriptor.get("storageType"):
        return None
    return load_deletion_vector(DeletionVector.from_json(descriptor), storage)


def _limited(batches: Iterator[pa.RecordBatch], limit: int) -> Iterator[pa.RecordBatch]:
    remaining = limit
    if remaining <= 0:
        return
    for batch in batches:
        if batch.num_rows >= remaining:
            yield batch.slice(0, remaining)
            return
        remaining -= batch.num_rows
        yield batch
