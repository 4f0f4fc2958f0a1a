"""The Avro schemas of Iceberg manifests and manifest lists (format versions 2 and 3), with
the field ids readers resolve them by; the partition struct is the table's own."""

from __future__ import annotations

import re
from dataclasses import dataclass

from deltaport.iceberg.avro.container import AvroSchema
from deltaport.iceberg.avro.entries import decimal_bytes

_DECIMAL = re.compile(r"decimal\((\d+),\s*(\d+)\)")


@dataclass(frozen=True)
class PartitionColumn:
    """A field of the manifests' partition struct: the partition field's name and id and
    the Iceberg type of its source column (a primitive)."""

    name: str
    field_id: int
    iceberg_type: str


def _optional(name: str, field_id: int, kind: object) -> AvroSchema:
    return {"name": name, "type": ["null", kind], "default": None, "field-id": field_id}


def _required(name: str, field_id: int, kind: object) -> AvroSchema:
    return {"name": name, "type": kind, "field-id": field_id}


def _int_map(key_id: int, value_id: int, value: str) -> AvroSchema:
    record = {
        "type": "record",
        "name": f"k{key_id}_v{value_id}",
        "fields": [_required("key", key_id, "int"), _required("value", value_id, value)],
    }
    return {"type": "array", "logicalType": "map", "items": record}


def avro_type(iceberg_type: str, name: str) -> str | AvroSchema:
    """The Avro type of a partition value of ``iceberg_type``."""
    simple: dict[str, str | AvroSchema] = {
        "boolean": "boolean",
        "int": "int",
        "long": "long",
        "float": "float",
        "double": "double",
        "string": "string",
        "binary": "bytes",
        "date": {"type": "int", "logicalType": "date"},
        "timestamp": {"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": False},
        "timestamptz": {"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": True},
    }
    if iceberg_type in simple:
        return simple[iceberg_type]
    match = _DECIMAL.fullmatch(iceberg_type)
    if match is None:
        raise ValueError(f"no Avro type for {iceberg_type}")
    precision, scale = int(match.group(1)), int(match.group(2))
    return {
        "type": "fixed",
        "name": f"{name}_decimal_{precision}_{scale}",
        "size": decimal_bytes(precision),
        "logicalType": "decimal",
        "precision": precision,
        "scale": scale,
    }


def avro_name(name: str) -> str:
    """``name`` as a valid Avro field name, as Iceberg's writers make it: each character
    Avro does not allow becomes ``_x`` and its code in hex (readers match by field id)."""
    out = []
    for i, char in enumerate(name):
        allowed = char == "_" or (char.isascii() and (char.isalpha() or (i and char.isdigit())))
        out.append(char if allowed else f"_x{ord(char):X}")
    return "".join(out) or "_"


def manifest_entry_schema(partition: list[PartitionColumn], format_version: int) -> AvroSchema:
    partition_record = {
        "type": "record",
        "name": "r102",
        "fields": [
            _optional(avro_name(p.name), p.field_id, avro_type(p.iceberg_type, f"p{p.field_id}"))
            for p in partition
        ],
    }
    data_fields = [
        _required("content", 134, "int"),
        _required("file_path", 100, "string"),
        _required("file_format", 101, "string"),
        _required("partition", 102, partition_record),
        _required("record_count", 103, "long"),
        _required("file_size_in_bytes", 104, "long"),
        _optional("column_sizes", 108, _int_map(117, 118, "long")),
        _optional("value_counts", 109, _int_map(119, 120, "long")),
        _optional("null_value_counts", 110, _int_map(121, 122, "long")),
        _optional("nan_value_counts", 137, _int_map(138, 139, "long")),
        _optional("lower_bounds", 125, _int_map(126, 127, "bytes")),
        _optional("upper_bounds", 128, _int_map(129, 130, "bytes")),
        _optional("key_metadata", 131, "bytes"),
        _optional("split_offsets", 132, {"type": "array", "items": "long", "element-id": 133}),
        _optional("equality_ids", 135, {"type": "array", "items": "int", "element-id": 136}),
        _optional("sort_order_id", 140, "int"),
    ]
    if format_version >= 3:
        data_fields += [
            _optional("first_row_id", 142, "long"),
            _optional("referenced_data_file", 143, "string"),
            _optional("content_offset", 144, "long"),
            _optional("content_size_in_bytes", 145, "long"),
        ]
    return {
        "type": "record",
        "name": "manifest_entry",
        "fields": [
            _required("status", 0, "int"),
            _optional("snapshot_id", 1, "long"),
            _optional("sequence_number", 3, "long"),
            _optional("file_sequence_number", 4, "long"),
            _required("data_file", 2, {"type": "record", "name": "r2", "fields": data_fields}),
        ],
    }


def manifest_list_schema(format_version: int) -> AvroSchema:
    summary = {
        "type": "record",
        "name": "r508",
        "fields": [
            _required("contains_null", 509, "boolean"),
            _optional("contains_nan", 518, "boolean"),
            _optional("lower_bound", 510, "bytes"),
            _optional("upper_bound", 511, "bytes"),
        ],
    }
    fields = [
        _required("manifest_path", 500, "string"),
        _required("manifest_length", 501, "long"),
        _required("partition_spec_id", 502, "int"),
        _required("content", 517, "int"),
        _required("sequence_number", 515, "long"),
        _required("min_sequence_number", 516, "long"),
        _required("added_snapshot_id", 503, "long"),
        _required("added_files_count", 504, "int"),
        _required("existing_files_count", 505, "int"),
        _required("deleted_files_count", 506, "int"),
        _required("added_rows_count", 512, "long"),
        _required("existing_rows_count", 513, "long"),
        _required("deleted_rows_count", 514, "long"),
        _optional("partitions", 507, {"type": "array", "items": summary, "element-id": 508}),
        _optional("key_metadata", 519, "bytes"),
    ]
    if format_version >= 3:
        fields.append(_optional("first_row_id", 520, "long"))
    return {"type": "record", "name": "manifest_file", "fields": fields}
