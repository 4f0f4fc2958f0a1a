"""Iceberg table metadata (format version 2) for a Delta table's snapshots: the JSON a
catalog's load-table answer carries and ``metadata-location`` points at."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any

PARTITION_FIELD_IDS_FROM = 1000


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

    def to_json(self, previous: SnapshotEntry | None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "snapshot-id": self.snapshot_id,
            "sequence-number": self.version + 1,
            "timestamp-ms": self.timestamp_ms,
            "manifest-list": self.manifest_list,
            "schema-id": self.schema_id,
            "summary": {
                "operation": "overwrite" if previous else "append",
                "delta.version": str(self.version),
                "delta.timestamp-ms": str(self.timestamp_ms),
                "total-data-files": str(self.files),
                "total-records": str(self.rows),
                "total-delete-files": "0",
            },
        }
        if previous is not None:
            out["parent-snapshot-id"] = previous.snapshot_id
        if self.first_row_id is not None:
            out["first-row-id"] = self.first_row_id
            out["added-rows"] = self.added_rows or 0
        return out


def partition_spec(columns: list[tuple[str, int]]) -> dict[str, Any]:
    """Identity partitions of ``columns`` (name and source field id)."""
    return {
        "spec-id": 0,
        "fields": [
            {
                "name": name,
                "transform": "identity",
                "source-id": source,
                "field-id": PARTITION_FIELD_IDS_FROM + i,
            }
            for i, (name, source) in enumerate(columns)
        ],
    }


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
    schemas: list[dict[str, Any]],
    last_column_id: int,
    spec: dict[str, Any],
    snapshots: list[SnapshotEntry],
    properties: dict[str, str],
    format_version: int = 2,
    next_row_id: int = 0,
) -> dict[str, Any]:
    """The metadata JSON with ``snapshots`` (oldest first; the last one is ``main``); a
    format version 3 table (deletion vectors) also carries its row lineage."""
    current = snapshots[-1]
    fields = spec["fields"]
    lineage = {"next-row-id": next_row_id} if format_version >= 3 else {}
    return {
        **lineage,
        "format-version": format_version,
        "table-uuid": table_id,
        "location": location,
        "last-sequence-number": current.version + 1,
        "last-updated-ms": current.timestamp_ms,
        "last-column-id": last_column_id,
        "current-schema-id": current.schema_id,
        "schemas": schemas,
        "default-spec-id": 0,
        "partition-specs": [spec],
        "last-partition-id": max((f["field-id"] for f in fields), default=999),
        "default-sort-order-id": 0,
        "sort-orders": [{"order-id": 0, "fields": []}],
        "properties": properties,
        "current-snapshot-id": current.snapshot_id,
        "refs": {"main": {"snapshot-id": current.snapshot_id, "type": "branch"}},
        "snapshots": [s.to_json(snapshots[i - 1] if i else None) for i, s in enumerate(snapshots)],
        "snapshot-log": [
            {"snapshot-id": s.snapshot_id, "timestamp-ms": s.timestamp_ms} for s in snapshots
        ],
        "metadata-log": [],
    }


def canonical(document: dict[str, Any]) -> bytes:
    return json.dumps(document, sort_keys=True, separators=(",", ":")).encode()
