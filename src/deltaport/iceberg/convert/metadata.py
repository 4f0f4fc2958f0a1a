"""Iceberg table metadata (format version 2, or 3 with deletion vectors) for a Delta
table's snapshots: what a catalog's load-table answer carries and ``metadata-location``
points at (:mod:`deltaport.iceberg.model.metadata` declares its shape)."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass

import msgspec

from deltaport.iceberg.model.metadata import (
    PartitionField,
    PartitionSpec,
    Schema,
    Snapshot,
    SnapshotLogEntry,
    SnapshotReference,
    SortOrder,
    TableMetadata,
)

PARTITION_FIELD_IDS_FROM = 1000


@dataclass(frozen=True)
class LoadedTable:
    """A load-table answer: where the metadata file is, the metadata, and its ETag."""

    metadata_location: str
    document: TableMetadata
    etag: str

    @property
    def metadata(self) -> dict[str, object]:
        """The metadata as the JSON values a reader decodes from the file."""
        values: dict[str, object] = msgspec.to_builtins(self.document)
        return values


@dataclass(frozen=True)
class SnapshotEntry:
    """One Delta version as an Iceberg snapshot (id and sequence number ``version + 1``)."""

    version: int
    timestamp_ms: int
    manifest_list: str
    schema_id: int
    files: int
    rows: int
    first_row_id: int | None = None
    added_rows: int | None = None

    @property
    def snapshot_id(self) -> int:
        return self.version + 1

    def snapshot(self, previous: SnapshotEntry | None) -> Snapshot:
        lineage = self.first_row_id is not None
        return Snapshot(
            snapshot_id=self.snapshot_id,
            sequence_number=self.version + 1,
            timestamp_ms=self.timestamp_ms,
            manifest_list=self.manifest_list,
            schema_id=self.schema_id,
            summary={
                "operation": "overwrite" if previous else "append",
                "delta.version": str(self.version),
                "delta.timestamp-ms": str(self.timestamp_ms),
                "total-data-files": str(self.files),
                "total-records": str(self.rows),
                "total-delete-files": "0",
            },
            parent_snapshot_id=None if previous is None else previous.snapshot_id,
            first_row_id=self.first_row_id,
            added_rows=(self.added_rows or 0) if lineage else None,
        )


def partition_spec(columns: list[tuple[str, int]]) -> PartitionSpec:
    """Identity partitions of ``columns`` (name and source field id)."""
    return PartitionSpec(
        spec_id=0,
        fields=[
            PartitionField(
                name=name,
                transform="identity",
                source_id=source,
                field_id=PARTITION_FIELD_IDS_FROM + i,
            )
            for i, (name, source) in enumerate(columns)
        ],
    )


def table_uuid(delta_id: str, location: str) -> str:
    """The Delta table id when it is a UUID, else one derived from the location (stable)."""
    try:
        return str(uuid.UUID(delta_id))
    except ValueError:
        return str(uuid.uuid5(uuid.NAMESPACE_URL, location))


def table_metadata(
    *,
    location: str,
    table_id: str,
    schemas: list[Schema],
    last_column_id: int,
    spec: PartitionSpec,
    snapshots: list[SnapshotEntry],
    properties: dict[str, str],
    format_version: int = 2,
    next_row_id: int = 0,
) -> TableMetadata:
    """The metadata with ``snapshots`` (oldest first; the last one is ``main``); a format
    version 3 table (deletion vectors) also carries its row lineage."""
    current = snapshots[-1]
    return TableMetadata(
        next_row_id=next_row_id if format_version >= 3 else None,
        format_version=format_version,
        table_uuid=table_id,
        location=location,
        last_sequence_number=current.version + 1,
        last_updated_ms=current.timestamp_ms,
        last_column_id=last_column_id,
        current_schema_id=current.schema_id,
        schemas=schemas,
        default_spec_id=0,
        partition_specs=[spec],
        last_partition_id=max((f.field_id for f in spec.fields), default=999),
        default_sort_order_id=0,
        sort_orders=[SortOrder(order_id=0, fields=[])],
        properties=properties,
        current_snapshot_id=current.snapshot_id,
        refs={"main": SnapshotReference(snapshot_id=current.snapshot_id, type="branch")},
        snapshots=[s.snapshot(snapshots[i - 1] if i else None) for i, s in enumerate(snapshots)],
        snapshot_log=[
            SnapshotLogEntry(snapshot_id=s.snapshot_id, timestamp_ms=s.timestamp_ms)
            for s in snapshots
        ],
        metadata_log=[],
    )


def canonical(metadata: TableMetadata) -> bytes:
    """The metadata file's bytes: sorted keys, compact, in Python's ``json`` spelling (ASCII
    escapes), as its name's digest has always been taken of."""
    document = msgspec.to_builtins(metadata)
    return json.dumps(document, sort_keys=True, separators=(",", ":")).encode()
