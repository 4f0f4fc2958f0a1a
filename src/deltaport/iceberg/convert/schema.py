"""A Delta schema as an Iceberg schema (with field ids) and its name mapping.

The name mapping (``schema.name-mapping.default``) lets readers find columns in data files
that carry no field ids, by the names the files use: the physical name of a column-mapping
table, the logical name otherwise (both are listed where they differ).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from deltaport.delta import DeltaTable, Metadata, Snapshot
from deltaport.iceberg.convert.field_ids import ASSIGNED_FROM_WITH_MAPPING, FieldIds
from deltaport.iceberg.errors import UnsupportedTable
from deltaport.iceberg.model import metadata as iceberg
from deltaport.iceberg.model.metadata import IcebergType, MappedField, NestedField, Schema
from deltaport.protocol.schema import (
    ArrayType,
    DataType,
    DecimalType,
    MapType,
    PrimitiveType,
    StructField,
    StructType,
    parse_schema,
)

NESTED_IDS_KEY = "delta.columnMapping.nested.ids"

CHANGE_COLUMN_IDS = {
    "_change_type": 2_000_000_001,
    "_commit_version": 2_000_000_002,
    "_commit_timestamp": 2_000_000_003,
}
"""Columns some Delta writers leave in data files beside the table's own (change data
feed writers); mapped to ids no schema uses, because some readers (pyiceberg) refuse a
file column the name mapping does not name, where the specification says to skip it."""

PARTITION_COLUMN_MAPPING_IDS_FROM = 2_000_100_000
"""Where the name mapping's ids of partition columns start (see
:func:`_read_partitions_from_metadata`)."""

_PROMOTIONS = {("int", "long"), ("float", "double")}
"""Type changes an Iceberg reader applies to older files (besides wider decimals)."""

_PRIMITIVES = {
    "boolean": "boolean",
    "byte": "int",
    "short": "int",
    "integer": "int",
    "long": "long",
    "float": "float",
    "double": "double",
    "string": "string",
    "binary": "binary",
    "date": "date",
    "timestamp": "timestamptz",
    "timestamp_ntz": "timestamp",
}


@dataclass
class IcebergSchema:
    """``schema`` is the Iceberg schema (id 0), ``name_mapping`` its name mapping, ``ids``
    each top-level and nested field's id by its logical path (``a.b``), and ``types`` each
    field's Iceberg type by id (what bounds and partition values are encoded as)."""

    schema: Schema
    name_mapping: list[MappedField]
    ids: dict[str, int] = field(default_factory=dict)
    types: dict[int, IcebergType] = field(default_factory=dict)
    column_mapping: bool = False
    physical: dict[str, str] = field(default_factory=dict)
    """The physical path (names in the data files and in Delta's stats) of each logical
    path."""

    @property
    def last_column_id(self) -> int:
        return max(self.types, default=0)


def iceberg_schema(
    struct: StructType,
    ids: FieldIds,
    *,
    column_mapping: bool,
    partition_columns: tuple[str, ...] = (),
) -> IcebergSchema:
    """Convert ``struct``; raises [`UnsupportedTable`][] naming a column whose type Iceberg
    cannot hold, or, in a column-mapping table, a list or map whose elements carry no field
    id (data files then hold ids on some fields only, which readers cannot resolve)."""
    out = IcebergSchema(Schema(schema_id=0, fields=[]), [], column_mapping=column_mapping)
    fields, mapping = _struct_fields(struct, ids, out, "", "", {})
    _read_partitions_from_metadata(fields, mapping, {c.lower() for c in partition_columns})
    out.schema.fields = fields
    taken = {name for entry in mapping for name in entry.names}
    out.name_mapping = mapping + [
        MappedField(field_id=field_id, names=[name])
        for name, field_id in CHANGE_COLUMN_IDS.items()
        if name not in taken
    ]
    return out


def field_ids_at(delta_table: DeltaTable, latest: Snapshot, ids: FieldIds | None) -> FieldIds:
    """The field ids of the table up to ``latest``: ``ids`` brought up to it, or derived
    again from the start when the log no longer begins where ``ids`` began (cleaned up)
    or the table took column mapping, as a server started now would derive them."""
    mapped = latest.metadata.column_mapping_mode != "none"
    first = ASSIGNED_FROM_WITH_MAPPING if mapped else 1
    if ids is not None and ids.first == first:
        if ids.walked == latest.version:
            return ids
        earliest, history = delta_table.metadata_history(ids.walked, latest.version)
        if earliest == ids.base:
            derive_field_ids(history, ids)
            ids.walked = latest.version
            return ids
    earliest, history = delta_table.metadata_history(None, latest.version)
    fresh = FieldIds(first, earliest)
    derive_field_ids(history, fresh)
    fresh.walked = latest.version
    return fresh


def derive_field_ids(history: list[tuple[int, Metadata]], ids: FieldIds) -> None:
    """Assign ``ids`` from a schema history (each version's metadata, in version order):
    each schema is converted in turn, so each field path takes the next id when it is
    first named. A schema Iceberg cannot hold still names its fields up to the one it
    cannot hold (the same ones on every replica)."""
    for _, metadata in history:
        mapped = metadata.column_mapping_mode != "none"
        try:
            iceberg_schema(
                parse_schema(metadata.schema_string),
                ids,
                column_mapping=mapped,
                partition_columns=tuple(metadata.partition_columns),
            )
        except (UnsupportedTable, ValueError):
            continue


def _read_partitions_from_metadata(
    fields: list[NestedField], mapping: list[MappedField], partitions: set[str]
) -> None:
    """Partition columns are optional and mapped by name to ids no schema uses.

    Delta takes a partition value from the log, never from a data file (a few writers also
    wrote the column into the files, sometimes with another type). A reader that finds no
    file column for an identity partition field takes the manifest's partition value, as
    the Iceberg specification says for migrated tables: so a file column of that name must
    not be found (and a required field missing from a file is refused by some readers).
    """
    for i, (entry, mapped) in enumerate(zip(fields, mapping, strict=True)):
        if entry.name.lower() in partitions:
            entry.required = False
            mapped.field_id = PARTITION_COLUMN_MAPPING_IDS_FROM + i


def _struct_fields(
    struct: StructType,
    ids: FieldIds,
    out: IcebergSchema,
    logical_prefix: str,
    physical_prefix: str,
    nested_ids: Mapping[str, int],
) -> tuple[list[NestedField], list[MappedField]]:
    fields: list[NestedField] = []
    mapping: list[MappedField] = []
    for f in struct:
        logical = logical_prefix + f.name
        physical = physical_prefix + f.physical_name
        field_id = ids.id_for(physical, f.field_id)
        out.ids[logical] = field_id
        out.physical[logical] = physical
        _check_type_changes(f, logical)
        own_nested = dict(f.metadata.get(NESTED_IDS_KEY) or {})
        iceberg_type, children = _type(
            f.type, ids, out, logical, physical, f.physical_name, own_nested, f
        )
        out.types[field_id] = iceberg_type
        comment = f.metadata.get("comment")
        fields.append(
            NestedField(
                id=field_id,
                name=f.name,
                required=not f.nullable,
                type=iceberg_type,
                doc=comment if isinstance(comment, str) else None,
            )
        )
        names = [f.physical_name] if f.physical_name == f.name else [f.physical_name, f.name]
        mapping.append(MappedField(field_id=field_id, names=names, fields=children))
    return fields, mapping


def _type(
    data_type: DataType,
    ids: FieldIds,
    out: IcebergSchema,
    logical: str,
    physical: str,
    nested_key: str,
    nested_ids: Mapping[str, int],
    owner: StructField,
) -> tuple[IcebergType, list[MappedField]]:
    """The Iceberg type of ``data_type`` and the name mapping of its children."""
    if isinstance(data_type, StructType):
        fields, mapping = _struct_fields(
            data_type, ids, out, logical + ".", physical + ".", nested_ids
        )
        return iceberg.StructType(fields=fields), mapping
    if isinstance(data_type, ArrayType):
        element_id = _nested_id(ids, out, logical, physical, nested_key, "element", nested_ids)
        element, children = _type(
            data_type.element_type,
            ids,
            out,
            logical + ".element",
            physical + ".element",
            nested_key + ".element",
            nested_ids,
            owner,
        )
        out.types[element_id] = element
        listed = iceberg.ListType(
            element_id=element_id,
            element=element,
            element_required=not data_type.contains_null,
        )
        return listed, [_mapped(element_id, "element", children)]
    if isinstance(data_type, MapType):
        key_id = _nested_id(ids, out, logical, physical, nested_key, "key", nested_ids)
        value_id = _nested_id(ids, out, logical, physical, nested_key, "value", nested_ids)
        key, key_children = _type(
            data_type.key_type,
            ids,
            out,
            logical + ".key",
            physical + ".key",
            nested_key + ".key",
            nested_ids,
            owner,
        )
        value, value_children = _type(
            data_type.value_type,
            ids,
            out,
            logical + ".value",
            physical + ".value",
            nested_key + ".value",
            nested_ids,
            owner,
        )
        out.types[key_id] = key
        out.types[value_id] = value
        mapped = iceberg.MapType(
            key_id=key_id,
            key=key,
            value_id=value_id,
            value=value,
            value_required=not data_type.value_contains_null,
        )
        return mapped, [
            _mapped(key_id, "key", key_children),
            _mapped(value_id, "value", value_children),
        ]
    if isinstance(data_type, DecimalType):
        return f"decimal({data_type.precision}, {data_type.scale})", []
    assert isinstance(data_type, PrimitiveType)
    found = _PRIMITIVES.get(data_type.name)
    if found is None:
        raise UnsupportedTable(
            f"column {logical!r} has type {data_type.name}, which Iceberg readers cannot read"
        )
    return found, []


def _nested_id(
    ids: FieldIds,
    out: IcebergSchema,
    logical: str,
    physical: str,
    nested_key: str,
    part: str,
    nested_ids: Mapping[str, int],
) -> int:
    known = nested_ids.get(f"{nested_key}.{part}")
    if known is None and out.column_mapping:
        raise UnsupportedTable(
            f"column {logical!r}: its {part}s have no field id in the table's column mapping "
            "(the table is not IcebergCompat), so Iceberg readers cannot find them in the "
            "data files"
        )
    return ids.id_for(f"{physical}.{part}", None if known is None else int(known))


def _mapped(field_id: int, name: str, children: list[MappedField]) -> MappedField:
    return MappedField(field_id=field_id, names=[name], fields=children)


def _check_type_changes(f: StructField, logical: str) -> None:
    """Refuses a column whose type was widened (Delta type widening) in a way Iceberg
    readers cannot apply to the files written before (an ``integer`` become ``double``)."""
    for change in f.metadata.get("delta.typeChanges") or ():
        before, after = str(change.get("fromType")), str(change.get("toType"))
        old, new = _PRIMITIVES.get(before, before), _PRIMITIVES.get(after, after)
        if old == new or (old, new) in _PROMOTIONS or _wider_decimal(old, new):
            continue
        raise UnsupportedTable(
            f"column {logical!r} was widened from {before} to {after}; Iceberg readers "
            "cannot read the files written before as the new type"
        )


def _wider_decimal(old: str, new: str) -> bool:
    if not (old.startswith("decimal(") and new.startswith("decimal(")):
        return False
    p1, s1 = (int(x) for x in old[8:-1].split(","))
    p2, s2 = (int(x) for x in new[8:-1].split(","))
    return s1 == s2 and p2 >= p1
