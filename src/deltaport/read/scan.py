"""Reading a whole snapshot, or the change data feed of a version range."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

import pyarrow as pa

from deltaport.delta.model import Metadata
from deltaport.read.data_file import DEFAULT_BATCH_SIZE
from deltaport.read.files import read_files
from deltaport.storage import Storage


class SnapshotFiles(Protocol):
    """What a scan needs of a snapshot: its active files (FILE_SCHEMA) and metadata."""

    @property
    def files(self) -> pa.Table: ...

    @property
    def metadata(self) -> Metadata: ...


class VersionMetadata(Protocol):
    @property
    def metadata(self) -> Metadata | None: ...


class ChangeFiles(Protocol):
    """What a change-data read needs: the selected file actions (CHANGE_SCHEMA), the
    metadata at the range start, and each version's metadata change."""

    @property
    def files(self) -> pa.Table: ...

    @property
    def metadata(self) -> Metadata: ...

    @property
    def versions(self) -> Sequence[VersionMetadata]: ...


def scan_snapshot(
    snapshot: SnapshotFiles,
    storage: Storage,
    *,
    columns: Sequence[str] | None = None,
    limit: int | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    prefetch: int | None = None,
) -> Iterator[pa.RecordBatch]:
    """Stream the rows of a snapshot (deleted rows dropped, logical names, table types)."""
    return read_files(
        snapshot.files,
        snapshot.metadata,
        storage,
        columns=columns,
        limit=limit,
        batch_size=batch_size,
        prefetch=prefetch,
    )


def read_change_data(
    changes: ChangeFiles,
    storage: Storage,
    *,
    columns: Sequence[str] | None = None,
    limit: int | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    prefetch: int | None = None,
) -> Iterator[pa.RecordBatch]:
    """Stream the change data feed rows of a range with ``_change_type``,
    ``_commit_version`` and ``_commit_timestamp``, in the schema at the range's end."""
    return read_files(
        changes.files,
        end_metadata(changes),
        storage,
        columns=columns,
        cdf=True,
        limit=limit,
        batch_size=batch_size,
        prefetch=prefetch,
    )


def end_metadata(changes: ChangeFiles) -> Metadata:
    """The metadata in force at the end of a change range."""
    metadata = changes.metadata
    for entry in changes.versions:
        metadata = entry.metadata or metadata
    return metadata
