"""Delta (Spark JSON) table schemas as typed values, and their mapping to Arrow.

A Delta ``schemaString`` is Spark's JSON form of a ``StructType``. :func:`parse_schema` turns
it into :class:`StructType` and friends, :func:`schema_to_json` writes it back in Spark's
own key order (so a parsed schema re-serialises to the same text), and
:func:`to_arrow_schema` / :func:`from_arrow_schema` convert to and from Arrow.

Column mapping: with ``delta.columnMapping.mode`` ``name`` or ``id`` every struct field,
nested ones too, carries ``delta.columnMapping.physicalName`` (the column name inside the
parquet files) and ``delta.columnMapping.id`` (the parquet field id).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import pyarrow as pa

PHYSICAL_NAME_KEY = "delta.columnMapping.physicalName"
FIELD_ID_KEY = "delta.columnMapping.id"
PARQUET_FIELD_ID_KEY = b"PARQUET:field_id"

PRIMITIVE_NAMES = frozenset(
    {
        "string",
        "long",
        "integer",
        "short",
        "byte",
        "float",
        "double",
        "boolean",
        "binary",
        "date",
        "timestamp",
        "timestamp_ntz",
        "void",
        "variant",
    }
)
"""Primitive type names Delta writes as plain strings (besides ``decimal(p,s)`` and the
parameterised geospatial types)."""

_DECIMAL = re.compile(r"decimal\(\s*(\d+)\s*,\s*(-?\d+)\s*\)")
_GEO = re.compile(r"(geometry|geography)(\(.*\))?")
MAX_DECIMAL_PRECISION = 38


@dataclass(frozen=True)
class PrimitiveType:
    """A non-nested type; ``name`` is the Delta spelling (``integer``, ``timestamp_ntz``,
    ``geometry(OGC:CRS84)``, ...)."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class DecimalType:
    precision: int
    scale: int

    @property
    def name(self) -> str:
        return f"decimal({self.precision},{self.scale})"

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class ArrayType:
    element_type: DataType
    contains_null: bool = True


@dataclass(frozen=True)
class MapType:
    key_type: DataType
    value_type: DataType
    value_contains_null: bool = True


@dataclass(frozen=True)
class StructField:
    name: str
    type: DataType
    nullable: bool = True
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def physical_name(self) -> str:
        """The column's name inside data files (the logical name without column mapping)."""
        value = self.metadata.get(PHYSICAL_NAME_KEY)
        return str(value) if value else self.name

    @property
    def field_id(self) -> int | None:
        """The column-mapping field id, when the table assigns one."""
        value = self.metadata.get(FIELD_ID_KEY)
        return None if value is None else int(value)


@dataclass(frozen=True)
class StructType:
    fields: tuple[StructField, ...] = ()

    def __iter__(self) -> Iterator[StructField]:
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.fields]

    def field(self, name: str) -> StructField:
        """The field called ``name`` (exact match first, then case-insensitive, as Spark)."""
        for f in self.fields:
            if f.name == name:
                return f
        lowered = name.lower()
        for f in self.fields:
            if f.name.lower() == lowered:
                return f
        raise KeyError(name)


DataType: TypeAlias = PrimitiveType | DecimalType | ArrayType | MapType | StructType


# -- JSON -> types ------------------------------------------------------------------------
def parse_schema(schema_string: str) -> StructType:
    """Parse a Delta ``schemaString``; raises ValueError when it is not a valid schema."""
    try:
        data = json.loads(schema_string)
    except (TypeError, json.JSONDecodeError) as exc:
        raise ValueError(f"schema string is not valid JSON: {exc}") from exc
    parsed = parse_data_type(data)
    if not isinstance(parsed, StructType):
        raise ValueError("a table schema must be a struct type")
    return parsed


def parse_data_type(data: Any, path: str = "<root>") -> DataType:
    """Parse one type from its JSON value (a string or an object)."""
    if isinstance(data, str):
        return _parse_type_name(data, path)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a type must be a string or an object, got {data!r}")
    kind = data.get("type")
    if kind == "struct":
        fields = data.get("fields")
        if not isinstance(fields, list):
            raise ValueError(f"{path}: struct type without a 'fields' list")
        return StructType(
            tuple(_parse_field(f, f"{path}.fields[{i}]") for i, f in enumerate(fields))
        )
    if kind == "array":
        _require(data, ("elementType", "containsNull"), path)
        return ArrayType(
            parse_data_type(data["elementType"], f"{path}.elementType"),
            _bool(data["containsNull"], f"{path}.containsNull"),
        )
    if kind == "map":
        _require(data, ("keyType", "valueType", "valueContainsNull"), path)
        return MapType(
            parse_data_type(data["keyType"], f"{path}.keyType"),
            parse_data_type(data["valueType"], f"{path}.valueType"),
            _bool(data["valueContainsNull"], f"{path}.valueContainsNull"),
        )
    raise ValueError(f"{path}: unknown complex type {kind!r}")


def _parse_type_name(name: str, path: str) -> DataType:
    if name in PRIMITIVE_NAMES or _GEO.fullmatch(name):
        return PrimitiveType(name)
    if name == "decimal":
        return DecimalType(10, 0)
    match = _DECIMAL.fullmatch(name)
    if match:
        precision, scale = int(match.group(1)), int(match.group(2))
        if not 0 < precision <= MAX_DECIMAL_PRECISION or not 0 <= scale <= precision:
            raise ValueError(f"{path}: invalid decimal precision/scale in {name!r}")
        return DecimalType(precision, scale)
    raise ValueError(f"{path}: unknown type {name!r}")


def _parse_field(data: Any, path: str) -> StructField:
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a struct field must be an object")
    _require(data, ("name", "type"), path)
    name = data["name"]
    if not isinstance(name, str):
        raise ValueError(f"{path}: field name must be a string")
    metadata = data.get("metadata", {})
    if not isinstance(metadata, dict):
        raise ValueError(f"{path}: field metadata must be an object")
    return StructField(
        name,
        parse_data_type(data["type"], f"{path}({name})"),
        _bool(data.get("nullable", True), f"{path}.nullable"),
        metadata,
    )


def _require(data: Mapping[str, Any], keys: tuple[str, ...], path: str) -> None:
    missing = [k for k in keys if k not in data]
    if missing:
        raise ValueError(f"{path}: missing {', '.join(missing)}")


def _bool(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{path}: expected true or false, got {value!r}")
    return value


# -- types -> JSON ------------------------------------------------------------------------
def schema_to_json(schema: StructType) -> str:
    """The compact Spark JSON text of ``schema`` (what Delta stores as ``schemaString``)."""
    return json.dumps(data_type_to_json(schema), separators=(",", ":"), ensure_ascii=False)


def data_type_to_json(data_type: DataType) -> Any:
    """The JSON value (string or dict) of one type, keys in Spark's order."""
    if isinstance(data_type, PrimitiveType | DecimalType):
        return data_type.name
    if isinstance(data_type, ArrayType):
        return {
            "type": "array",
            "elementType": data_type_to_json(data_type.element_type),
            "containsNull": data_type.contains_null,
        }
    if isinstance(data_type, MapType):
        return {
            "type": "map",
            "keyType": data_type_to_json(data_type.key_type),
            "valueType": data_type_to_json(data_type.value_type),
            "valueContainsNull": data_type.value_contains_null,
        }
    return {
        "type": "struct",
        "fields": [
            {
                "name": f.name,
                "type": data_type_to_json(f.type),
                "nullable": f.nullable,
                "metadata": dict(f.metadata),
            }
            for f in data_type.fields
        ],
    }


# -- types -> Arrow -----------------------------------------------------------------------
TIMESTAMP_TYPE = pa.timestamp("us", tz="UTC")
TIMESTAMP_NTZ_TYPE = pa.timestamp("us")
VARIANT_TYPE = pa.struct(
    [
        pa.field("value", pa.binary(), nullable=False),
        pa.field("metadata", pa.binary(), nullable=False),
    ]
)
"""Unshredded variant as Delta stores it in parquet: a struct of two binary columns."""

_PRIMITIVE_ARROW: dict[str, pa.DataType] = {
    "string": pa.string(),
    "long": pa.int64(),
    "integer": pa.int32(),
    "short": pa.int16(),
    "byte": pa.int8(),
    "float": pa.float32(),
    "double": pa.float64(),
    "boolean": pa.bool_(),
    "binary": pa.binary(),
    "date": pa.date32(),
    "timestamp": TIMESTAMP_TYPE,
    "timestamp_ntz": TIMESTAMP_NTZ_TYPE,
    "void": pa.null(),
    "variant": VARIANT_TYPE,
}


def to_arrow_schema(schema: StructType, *, physical: bool = False) -> pa.Schema:
    """The Arrow schema of a Delta schema.

    With ``physical=True`` fields carry the physical (column-mapping) names, nested ones too,
    and the column-mapping ids as ``PARQUET:field_id`` metadata: the schema of the data files.
    """
    return pa.schema([to_arrow_field(f, physical=physical) for f in schema.fields])


def to_arrow_field(struct_field: StructField, *, physical: bool = False) -> pa.Field:
    name = struct_field.physical_name if physical else struct_field.name
    metadata = None
    if physical and struct_field.field_id is not None:
        metadata = {PARQUET_FIELD_ID_KEY: str(struct_field.field_id).encode()}
    return pa.field(
        name,
        to_arrow_type(struct_field.type, physical=physical),
        nullable=struct_field.nullable,
        metadata=metadata,
    )


def to_arrow_type(data_type: DataType, *, physical: bool = False) -> pa.DataType:
    """The Arrow type of a Delta type (geospatial types are WKB binary)."""
    if isinstance(data_type, DecimalType):
        return pa.decimal128(data_type.precision, data_type.scale)
    if isinstance(data_type, PrimitiveType):
        if _GEO.fullmatch(data_type.name):
            return pa.binary()
        return _PRIMITIVE_ARROW[data_type.name]
    if isinstance(data_type, ArrayType):
        element = to_arrow_type(data_type.element_type, physical=physical)
        return pa.list_(pa.field("element", element, nullable=data_type.contains_null))
    if isinstance(data_type, MapType):
        return pa.map_(
            pa.field("key", to_arrow_type(data_type.key_type, physical=physical), nullable=False),
            pa.field(
                "value",
                to_arrow_type(data_type.value_type, physical=physical),
                nullable=data_type.value_contains_null,
            ),
        )
    return pa.struct([to_arrow_field(f, physical=physical) for f in data_type.fields])


# -- Arrow -> types -----------------------------------------------------------------------
def from_arrow_schema(schema: pa.Schema) -> StructType:
    """The Delta schema of an Arrow schema; raises ValueError for types Delta cannot hold."""
    return StructType(tuple(_from_arrow_field(f, f.name) for f in schema))


def _from_arrow_field(arrow_field: pa.Field, path: str) -> StructField:
    return StructField(
        arrow_field.name, from_arrow_type(arrow_field.type, path), arrow_field.nullable, {}
    )


_ARROW_PRIMITIVES: list[tuple[Any, str]] = [
    (pa.types.is_int8, "byte"),
    (pa.types.is_int16, "short"),
    (pa.types.is_int32, "integer"),
    (pa.types.is_int64, "long"),
    (pa.types.is_uint8, "short"),
    (pa.types.is_uint16, "integer"),
    (pa.types.is_uint32, "long"),
    (pa.types.is_float16, "float"),
    (pa.types.is_float32, "float"),
    (pa.types.is_float64, "double"),
    (pa.types.is_boolean, "boolean"),
    (pa.types.is_string, "string"),
    (pa.types.is_large_string, "string"),
    (pa.types.is_string_view, "string"),
    (pa.types.is_binary, "binary"),
    (pa.types.is_large_binary, "binary"),
    (pa.types.is_binary_view, "binary"),
    (pa.types.is_fixed_size_binary, "binary"),
    (pa.types.is_date, "date"),
    (pa.types.is_null, "void"),
]


def from_arrow_type(arrow_type: pa.DataType, path: str = "<root>") -> DataType:
    """The Delta type of an Arrow type (timestamps with a zone -> ``timestamp``, without ->
    ``timestamp_ntz``)."""
    if pa.types.is_timestamp(arrow_type):
        return PrimitiveType("timestamp" if arrow_type.tz else "timestamp_ntz")
    if pa.types.is_decimal(arrow_type):
        if arrow_type.precision > MAX_DECIMAL_PRECISION:
            raise ValueError(f"{path}: decimal precision above {MAX_DECIMAL_PRECISION}")
        return DecimalType(arrow_type.precision, arrow_type.scale)
    if pa.types.is_map(arrow_type):
        return MapType(
            from_arrow_type(arrow_type.key_type, f"{path}.key"),
            from_arrow_type(arrow_type.item_type, f"{path}.value"),
            arrow_type.item_field.nullable,
        )
    if (
        pa.types.is_list(arrow_type)
        or pa.types.is_large_list(arrow_type)
        or pa.types.is_fixed_size_list(arrow_type)
        or pa.types.is_list_view(arrow_type)
    ):
        return ArrayType(
            from_arrow_type(arrow_type.value_type, f"{path}.element"),
            arrow_type.value_field.nullable,
        )
    if pa.types.is_struct(arrow_type):
        return StructType(
            tuple(_from_arrow_field(f, f"{path}.{f.name}") for f in arrow_type.fields)
        )
    if pa.types.is_dictionary(arrow_type):
        return from_arrow_type(arrow_type.value_type, path)
    for predicate, name in _ARROW_PRIMITIVES:
        if predicate(arrow_type):
            return PrimitiveType(name)
    raise ValueError(f"{path}: Arrow type {arrow_type} has no Delta equivalent")


# -- column mapping -----------------------------------------------------------------------
def physical_names(schema: StructType) -> dict[tuple[str, ...], str]:
    """Logical field path (top-level and nested struct fields) -> physical name."""
    return {path: f.physical_name for path, f in iter_fields(schema)}


def field_ids(schema: StructType) -> dict[tuple[str, ...], int]:
    """Logical field path -> column-mapping field id, for fields that have one."""
    return {path: f.field_id for path, f in iter_fields(schema) if f.field_id is not None}


def iter_fields(
    data_type: DataType, prefix: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], StructField]]:
    """Every struct field below ``data_type`` with its logical path; fields inside arrays and
    maps get the path components ``element``, ``key`` and ``value``."""
    if isinstance(data_type, StructType):
        for f in data_type.fields:
            path = (*prefix, f.name)
            yield path, f
            yield from iter_fields(f.type, path)
    elif isinstance(data_type, ArrayType):
        yield from iter_fields(data_type.element_type, (*prefix, "element"))
    elif isinstance(data_type, MapType):
        yield from iter_fields(data_type.key_type, (*prefix, "key"))
        yield from iter_fields(data_type.value_type, (*prefix, "value"))


def type_string(data_type: object) -> str:
    """A Delta type as Spark's DDL prints it (``array<struct<a: int>>``)."""
    if isinstance(data_type, ArrayType):
        return f"array<{type_string(data_type.element_type)}>"
    if isinstance(data_type, MapType):
        return f"map<{type_string(data_type.key_type)}, {type_string(data_type.value_type)}>"
    if isinstance(data_type, StructType):
        inner = ", ".join(f"{f.name}: {type_string(f.type)}" for f in data_type.fields)
        return f"struct<{inner}>"
    return str(data_type)
