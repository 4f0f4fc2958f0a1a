"""Delta schema strings: parsing, exact re-serialisation, Arrow mapping, column mapping."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pyarrow as pa
import pytest

from corpus import corpus_tables
from deltaport.protocol.schema import (
    PARQUET_FIELD_ID_KEY,
    ArrayType,
    DecimalType,
    MapType,
    PrimitiveType,
    StructField,
    StructType,
    field_ids,
    from_arrow_schema,
    parse_schema,
    physical_names,
    schema_to_json,
    to_arrow_schema,
)


def _corpus_schema_strings() -> Iterator[str]:
    for table in corpus_tables():
        log = table.path / "_delta_log"
        if not log.is_dir():
            continue
        for commit in sorted(log.glob("*.json")):
            for line in commit.read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    action = json.loads(line)
                except json.JSONDecodeError:
                    continue
                schema = (action.get("metaData") or {}).get("schemaString")
                if schema:
                    yield schema


CORPUS_SCHEMAS = sorted(set(_corpus_schema_strings()))


def test_corpus_has_many_schemas() -> None:
    assert len(CORPUS_SCHEMAS) > 100


@pytest.mark.parametrize("text", CORPUS_SCHEMAS, ids=range(len(CORPUS_SCHEMAS)))
def test_corpus_schema_round_trips_exactly(text: str) -> None:
    schema = parse_schema(text)
    assert schema_to_json(schema) == text
    logical = to_arrow_schema(schema)
    physical = to_arrow_schema(schema, physical=True)
    assert len(logical) == len(physical) == len(schema)


SAMPLE = json.dumps(
    {
        "type": "struct",
        "fields": [
            {"name": "b", "type": "byte", "nullable": True, "metadata": {}},
            {"name": "s", "type": "short", "nullable": True, "metadata": {}},
            {"name": "i", "type": "integer", "nullable": False, "metadata": {"comment": "x"}},
            {"name": "l", "type": "long", "nullable": True, "metadata": {}},
            {"name": "f", "type": "float", "nullable": True, "metadata": {}},
            {"name": "d", "type": "double", "nullable": True, "metadata": {}},
            {"name": "bo", "type": "boolean", "nullable": True, "metadata": {}},
            {"name": "st", "type": "string", "nullable": True, "metadata": {}},
            {"name": "bi", "type": "binary", "nullable": True, "metadata": {}},
            {"name": "da", "type": "date", "nullable": True, "metadata": {}},
            {"name": "ts", "type": "timestamp", "nullable": True, "metadata": {}},
            {"name": "tn", "type": "timestamp_ntz", "nullable": True, "metadata": {}},
            {"name": "de", "type": "decimal(38,18)", "nullable": True, "metadata": {}},
            {"name": "v", "type": "void", "nullable": True, "metadata": {}},
            {"name": "va", "type": "variant", "nullable": True, "metadata": {}},
            {
                "name": "a",
                "type": {"type": "array", "elementType": "integer", "containsNull": False},
                "nullable": True,
                "metadata": {},
            },
            {
                "name": "m",
                "type": {
                    "type": "map",
                    "keyType": "string",
                    "valueType": {
                        "type": "struct",
                        "fields": [{"name": "x", "type": "long", "nullable": True, "metadata": {}}],
                    },
                    "valueContainsNull": True,
                },
                "nullable": True,
                "metadata": {},
            },
        ],
    },
    separators=(",", ":"),
)


def test_parse_typed_values() -> None:
    schema = parse_schema(SAMPLE)
    assert schema.field("i") == StructField("i", PrimitiveType("integer"), False, {"comment": "x"})
    assert schema.field("DE").type == DecimalType(38, 18)
    assert schema.field("a").type == ArrayType(PrimitiveType("integer"), False)
    value_type = StructType((StructField("x", PrimitiveType("long"), True, {}),))
    assert schema.field("m").type == MapType(PrimitiveType("string"), value_type, True)
    assert schema_to_json(schema) == SAMPLE


def test_arrow_types() -> None:
    arrow = to_arrow_schema(parse_schema(SAMPLE))
    expected = {
        "b": pa.int8(),
        "s": pa.int16(),
        "i": pa.int32(),
        "l": pa.int64(),
        "f": pa.float32(),
        "d": pa.float64(),
        "bo": pa.bool_(),
        "st": pa.string(),
        "bi": pa.binary(),
        "da": pa.date32(),
        "ts": pa.timestamp("us", tz="UTC"),
        "tn": pa.timestamp("us"),
        "de": pa.decimal128(38, 18),
        "v": pa.null(),
        "va": pa.struct(
            [
                pa.field("value", pa.binary(), nullable=False),
                pa.field("metadata", pa.binary(), nullable=False),
            ]
        ),
        "a": pa.list_(pa.field("element", pa.int32(), nullable=False)),
        "m": pa.map_(pa.string(), pa.struct([pa.field("x", pa.int64())])),
    }
    assert {f.name: f.type for f in arrow} == expected
    assert not arrow.field("i").nullable


def test_geospatial_types_are_wkb_binary() -> None:
    text = (
        '{"type":"struct","fields":[{"name":"g","type":"geometry(OGC:CRS84)",'
        '"nullable":true,"metadata":{}}]}'
    )
    schema = parse_schema(text)
    assert schema_to_json(schema) == text
    assert to_arrow_schema(schema).field("g").type == pa.binary()


def test_from_arrow_round_trip() -> None:
    schema = parse_schema(SAMPLE)
    without_variant = StructType(tuple(f for f in schema.fields if f.name != "va"))
    arrow = to_arrow_schema(without_variant)
    plain = tuple(StructField(f.name, f.type, f.nullable, {}) for f in without_variant.fields)
    assert from_arrow_schema(arrow) == StructType(plain)


def test_from_arrow_other_arrow_types() -> None:
    arrow = pa.schema(
        [
            pa.field("ls", pa.large_string()),
            pa.field("u8", pa.uint8()),
            pa.field("ll", pa.large_list(pa.int64())),
            pa.field("dict", pa.dictionary(pa.int32(), pa.string())),
            pa.field("tz", pa.timestamp("ns", tz="Europe/Paris")),
        ]
    )
    types = {f.name: f.type for f in from_arrow_schema(arrow)}
    assert types == {
        "ls": PrimitiveType("string"),
        "u8": PrimitiveType("short"),
        "ll": ArrayType(PrimitiveType("long"), True),
        "dict": PrimitiveType("string"),
        "tz": PrimitiveType("timestamp"),
    }


@pytest.mark.parametrize("arrow_type", [pa.uint64(), pa.duration("s"), pa.decimal256(50, 2)])
def test_from_arrow_refuses_types_delta_lacks(arrow_type: pa.DataType) -> None:
    with pytest.raises(ValueError, match="x"):
        from_arrow_schema(pa.schema([pa.field("x", arrow_type)]))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "not valid JSON"),
        ('"integer"', "must be a struct"),
        ('{"type":"struct"}', "fields"),
        ('{"type":"struct","fields":[{"name":"a","type":"int"}]}', "unknown type 'int'"),
        ('{"type":"struct","fields":[{"type":"long"}]}', "missing name"),
        ('{"type":"struct","fields":[{"name":"a","type":"decimal(40,2)"}]}', "precision"),
        ('{"type":"struct","fields":[{"name":"a","type":"long","nullable":"yes"}]}', "true or"),
        ('{"type":"struct","fields":[{"name":"a","type":{"type":"array"}}]}', "elementType"),
        ('{"type":"struct","fields":[{"name":"a","type":{"type":"set"}}]}', "complex type"),
    ],
)
def test_malformed_schema_strings(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_schema(text)


def test_column_mapping_physical_schema_and_helpers() -> None:
    text = next(s for s in CORPUS_SCHEMAS if "delta.columnMapping.id" in s and "ByteType" in s)
    schema = parse_schema(text)
    names = physical_names(schema)
    ids = field_ids(schema)
    assert all(v.startswith("col-") for v in names.values())
    assert len(ids) == len(names) and len(set(ids.values())) == len(ids)
    nested = [path for path in names if len(path) > 1]
    assert nested, "the table has nested struct fields"
    physical = to_arrow_schema(schema, physical=True)
    first = schema.fields[0]
    assert physical.field(0).name == first.physical_name
    assert physical.field(0).metadata[PARQUET_FIELD_ID_KEY] == str(first.field_id).encode()
    struct_field = next(f for f in physical if pa.types.is_struct(f.type))
    assert all(child.name.startswith("col-") for child in struct_field.type)
    assert all(PARQUET_FIELD_ID_KEY in child.metadata for child in struct_field.type)


def test_fields_without_mapping_use_logical_names() -> None:
    field = StructField("a", PrimitiveType("long"))
    assert field.physical_name == "a"
    assert field.field_id is None
