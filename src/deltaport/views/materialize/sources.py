"""A source table's rows as the server reads them (deletion vectors applied, column
mapping resolved, partition values added), one file at a time or whole."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from deltaport.delta import DeletionVector, Snapshot
from deltaport.read import read_files, table_arrow_schema
from deltaport.storage import Storage


def deletion_vector_id(descriptor: dict[str, Any] | None) -> str | None:
    """The unique id of a file's deletion vector, None without one."""
    if not descriptor or not descriptor.get("storageType"):
        return None
    return DeletionVector.from_json(descriptor).unique_id


def file_rows(snapshot: Snapshot, storage: Storage, index: int) -> pa.RecordBatchReader:
    """The logical rows of the ``index``-th active file of ``snapshot``."""
    one = snapshot.files.slice(index, 1)
    schema = table_arrow_schema(snapshot.metadata)
    return pa.RecordBatchReader.from_batches(schema, read_files(one, snapshot.metadata, storage))


def snapshot_rows(snapshot: Snapshot, storage: Storage) -> pa.RecordBatchReader:
    schema = table_arrow_schema(snapshot.metadata)
    return pa.RecordBatchReader.from_batches(
        schema, read_files(snapshot.files, snapshot.metadata, storage)
    )
