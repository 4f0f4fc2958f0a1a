"""Iceberg table metadata (the specification's table metadata JSON): schemas and their
types, the name mapping, the partition spec, snapshots and their log.

Field names are the specification's kebab-case names (``rename="kebab"``); a field with a
default is left out of the JSON while it holds it (``omit_defaults``), as the specification
leaves out what a table does not have.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

import msgspec


class _Json(msgspec.Struct, omit_defaults=True, rename="kebab"):
    """The settings every metadata struct shares."""


class StructType(_Json, tag_field="type", tag="struct"):
    fields: list[NestedField]


class ListType(_Json, tag_field="type", tag="list"):
    element_id: int
    element: IcebergType
    element_required: bool


class MapType(_Json, tag_field="type", tag="map"):
    key_id: int
    key: IcebergType
    value_id: int
    value: IcebergType
    value_required: bool


IcebergType: TypeAlias = "str | StructType | ListType | MapType"
"""A primitive type by name (``long``, ``decimal(10, 2)``) or a nested type."""


class NestedField(_Json):
    """A field of a struct: a column, or a field nested in one."""

    id: int
    name: str
    required: bool
    type: IcebergType
    doc: str | None = None


class Schema(_Json, tag_field="type", tag="struct"):
    schema_id: int
    fields: list[NestedField]


class MappedField(_Json):
    """One entry of the name mapping (``schema.name-mapping.default``): the names a data
    file may give the field with ``field_id``."""

    field_id: int
    names: list[str]
    fields: list[MappedField] = []


class PartitionField(_Json):
    name: str
    transform: str
    source_id: int
    field_id: int


class PartitionSpec(_Json):
    spec_id: int
    fields: list[PartitionField]


class SortField(_Json):
    transform: str
    source_id: int
    direction: Literal["asc", "desc"]
    null_order: Literal["nulls-first", "nulls-last"]


class SortOrder(_Json):
    order_id: int
    fields: list[SortField]


class Snapshot(_Json):
    snapshot_id: int
    sequence_number: int
    timestamp_ms: int
    manifest_list: str
    schema_id: int
    summary: dict[str, str]
    parent_snapshot_id: int | None = None
    first_row_id: int | None = None
    added_rows: int | None = None


class SnapshotReference(_Json):
    snapshot_id: int
    type: Literal["branch", "tag"]


class SnapshotLogEntry(_Json):
    snapshot_id: int
    timestamp_ms: int


class MetadataLogEntry(_Json):
    metadata_file: str
    timestamp_ms: int


class TableMetadata(_Json, kw_only=True):
    """The table metadata; ``next_row_id`` (row lineage) in format version 3 only."""

    next_row_id: int | None = None
    format_version: int
    table_uuid: str
    location: str
    last_sequence_number: int
    last_updated_ms: int
    last_column_id: int
    current_schema_id: int
    schemas: list[Schema]
    default_spec_id: int
    partition_specs: list[PartitionSpec]
    last_partition_id: int
    default_sort_order_id: int
    sort_orders: list[SortOrder]
    properties: dict[str, str]
    current_snapshot_id: int
    refs: dict[str, SnapshotReference]
    snapshots: list[Snapshot]
    snapshot_log: list[SnapshotLogEntry]
    metadata_log: list[MetadataLogEntry]
