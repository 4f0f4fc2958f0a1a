"""Iceberg table metadata (the specification's table metadata JSON): schemas and their
types, the name mapping, the partition spec, snapshots and their log.

Field names are the specification's kebab-case names (``rename="kebab"``); a field with a
default is left out of the JSON while it holds it (``omit_defaults``), as the specification
leaves out what a table does not have.
"""

from __future__ import annotations

from typing import Annotated, Literal, TypeAlias

import msgspec

Int = Annotated[int, msgspec.Meta(extra_json_schema={"format": "int32"})]
Long = Annotated[int, msgspec.Meta(extra_json_schema={"format": "int64"})]


class _Json(msgspec.Struct, omit_defaults=True, rename="kebab"):
    """The settings every metadata struct shares."""


class StructType(_Json, tag_field="type", tag="struct"):
    fields: list[NestedField]


class ListType(_Json, tag_field="type", tag="list"):
    element_id: Int
    element: IcebergType
    element_required: bool


class MapType(_Json, tag_field="type", tag="map"):
    key_id: Int
    key: IcebergType
    value_id: Int
    value: IcebergType
    value_required: bool


IcebergType: TypeAlias = "str | StructType | ListType | MapType"
"""A primitive type by name (``long``, ``decimal(10, 2)``) or a nested type."""


class NestedField(_Json):
    """A field of a struct: a column, or a field nested in one."""

    id: Int
    name: str
    required: bool
    type: Annotated[
        IcebergType,
        msgspec.Meta(description="A primitive type's name, or a nested type's object."),
    ]
    doc: str | None = None


class Schema(_Json, tag_field="type", tag="struct"):
    schema_id: Int
    fields: list[NestedField]


class MappedField(_Json):
    """One entry of the name mapping (``schema.name-mapping.default``): the names a data
    file may give the field with ``field_id``."""

    field_id: Int
    names: list[str]
    fields: list[MappedField] = []


class PartitionField(_Json):
    name: str
    transform: str
    source_id: Int
    field_id: Int


class PartitionSpec(_Json):
    spec_id: Int
    fields: list[PartitionField]


class SortField(_Json):
    transform: str
    source_id: Int
    direction: Literal["asc", "desc"]
    null_order: Literal["nulls-first", "nulls-last"]


class SortOrder(_Json):
    order_id: Int
    fields: list[SortField]


class Snapshot(_Json):
    snapshot_id: Long
    sequence_number: Long
    timestamp_ms: Long
    manifest_list: str
    schema_id: Int
    summary: Annotated[
        dict[str, str],
        msgspec.Meta(
            description="The operation (append or overwrite), and with delta.version and "
            "delta.timestamp-ms the Delta version served.",
            extra_json_schema={
                "properties": {
                    "operation": {
                        "type": "string",
                        "enum": ["append", "replace", "overwrite", "delete"],
                    }
                },
                "required": ["operation"],
            },
        ),
    ]
    parent_snapshot_id: Long | None = None
    first_row_id: Long | None = None
    added_rows: Long | None = None


class SnapshotReference(_Json):
    snapshot_id: Long
    type: Literal["branch", "tag"]


class SnapshotLogEntry(_Json):
    snapshot_id: Long
    timestamp_ms: Long


class MetadataLogEntry(_Json):
    metadata_file: str
    timestamp_ms: Long


class TableMetadata(_Json, kw_only=True):
    """The table metadata; ``next_row_id`` (row lineage) in format version 3 only."""

    next_row_id: Long | None = None
    format_version: Annotated[int, msgspec.Meta(ge=1, le=3)]
    table_uuid: str
    location: str
    last_sequence_number: Long
    last_updated_ms: Long
    last_column_id: Int
    current_schema_id: Int
    schemas: list[Schema]
    default_spec_id: Int
    partition_specs: list[PartitionSpec]
    last_partition_id: Int
    default_sort_order_id: Int
    sort_orders: list[SortOrder]
    properties: dict[str, str]
    current_snapshot_id: Long
    refs: dict[str, SnapshotReference]
    snapshots: list[Snapshot]
    snapshot_log: list[SnapshotLogEntry]
    metadata_log: list[MetadataLogEntry]
