"""Casting file columns to the table schema: leaves, widening, nested reconciliation."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from deltaport.delta.model import Metadata
from deltaport.protocol.schema import (
    ArrayType,
    MapType,
    PrimitiveType,
    StructField,
    StructType,
    parse_data_type,
)
from deltaport.read import cast_leaf, read_data_file
from deltaport.read.column_mapping import conform_array

UTC = dt.UTC


@pytest.mark.parametrize(
    ("array", "target", "expected"),
    [
        (
            pa.array([1_000_001_999], pa.timestamp("ns")),
            pa.timestamp("us", tz="UTC"),
            [dt.datetime(1970, 1, 1, 0, 0, 1, 1, tzinfo=UTC)],
        ),
        (
            pa.array([1500], pa.timestamp("ms", tz="America/New_York")),
            pa.timestamp("us", tz="UTC"),
            [dt.datetime(1970, 1, 1, 0, 0, 1, 500000, tzinfo=UTC)],
        ),
        (
            pa.array([5], pa.timestamp("us")),
            pa.timestamp("us", tz="UTC"),
            [dt.datetime(1970, 1, 1, 0, 0, 0, 5, tzinfo=UTC)],
        ),
        (
            pa.array([7], pa.timestamp("ms")),
            pa.timestamp("us"),
            [dt.datetime(1970, 1, 1, 0, 0, 0, 7000)],
        ),
        (pa.array([1, None], pa.int32()), pa.int64(), [1, None]),
        (pa.array([1], pa.int8()), pa.int64(), [1]),
        (pa.array([1.5], pa.float32()), pa.float64(), [1.5]),
        (pa.array([3], pa.int16()), pa.float64(), [3.0]),
        (
            pa.array([Decimal("1.25")], pa.decimal128(5, 2)),
            pa.decimal128(10, 4),
            [Decimal("1.2500")],
        ),
        (pa.array([12], pa.int32()), pa.decimal128(11, 1), [Decimal("12.0")]),
        (pa.array([dt.date(2024, 9, 9)]), pa.timestamp("us"), [dt.datetime(2024, 9, 9)]),
        (pa.array(["a", "b", "a"]).dictionary_encode(), pa.string(), ["a", "b", "a"]),
        (pa.array(["x"], pa.large_string()), pa.string(), ["x"]),
        (pa.nulls(2), pa.int32(), [None, None]),
    ],
)
def test_cast_leaf(array: pa.Array, target: pa.DataType, expected: list[Any]) -> None:
    out = cast_leaf(array, target)
    assert out.type == target
    assert out.to_pylist() == expected


def test_cast_leaf_refuses_impossible_casts() -> None:
    with pytest.raises(TypeError, match="cannot read"):
        cast_leaf(pa.array(["x"]), pa.int32())
    with pytest.raises(TypeError, match="cannot read"):
        cast_leaf(pa.array([Decimal("123.45")], pa.decimal128(5, 2)), pa.decimal128(4, 2))


def test_struct_fields_reordered_missing_and_widened() -> None:
    file_array = pa.array(
        [{"b": 1, "a": "x", "extra": 1.0}, None, {"b": None, "a": "y", "extra": 2.0}],
        pa.struct([("b", pa.int32()), ("a", pa.string()), ("extra", pa.float64())]),
    )
    target = StructType(
        (
            StructField("a", PrimitiveType("string")),
            StructField("b", PrimitiveType("long")),
            StructField("new", PrimitiveType("date")),
        )
    )
    out = conform_array(file_array, target, "none")
    assert out.type == pa.struct([("a", pa.string()), ("b", pa.int64()), ("new", pa.date32())])
    assert out.to_pylist() == [
        {"a": "x", "b": 1, "new": None},
        None,
        {"a": "y", "b": None, "new": None},
    ]


def test_arrays_and_maps_of_structs_with_nulls_and_slices() -> None:
    element = pa.struct([("v", pa.int32())])
    lists = pa.array([[{"v": 1}, None], None, [], [{"v": 2}]], pa.list_(element))
    maps = pa.array([[("k", {"v": 1})], None, [("z", None)], []], pa.map_(pa.string(), element))
    wide = StructType(
        (StructField("v", PrimitiveType("long")), StructField("w", PrimitiveType("string")))
    )
    list_out = conform_array(lists.slice(1), ArrayType(wide), "none")
    assert list_out.to_pylist() == [None, [], [{"v": 2, "w": None}]]
    map_out = conform_array(maps, MapType(PrimitiveType("string"), wide), "none")
    assert map_out.type == pa.map_(pa.string(), pa.struct([("v", pa.int64()), ("w", pa.string())]))
    assert map_out.to_pylist() == [[("k", {"v": 1, "w": None})], None, [("z", None)], []]
    assert conform_array(
        maps.slice(2), MapType(PrimitiveType("string"), wide), "none"
    ).to_pylist() == [
        [("z", None)],
        [],
    ]


def _metadata(fields: list[dict[str, Any]]) -> Metadata:
    return Metadata(id="t", schema_string=json.dumps({"type": "struct", "fields": fields}))


def _field(name: str, type_: Any) -> dict[str, Any]:
    return {"name": name, "type": type_, "nullable": True, "metadata": {}}


def _read(path: Path, metadata: Metadata) -> pa.Table:
    return pa.Table.from_batches(list(read_data_file(str(path), metadata=metadata)))


def test_int96_and_out_of_nanosecond_range_timestamps(tmp_path: Path) -> None:
    stamps = [dt.datetime(2020, 1, 1, 12), dt.datetime(9999, 12, 31), dt.datetime(1, 1, 1)]
    path = tmp_path / "int96.parquet"
    pq.write_table(
        pa.table({"ts": pa.array(stamps, pa.timestamp("us"))}),
        path,
        use_deprecated_int96_timestamps=True,
    )
    assert pq.ParquetFile(path).schema.column(0).physical_type == "INT96"
    got = _read(path, _metadata([_field("ts", "timestamp")]))
    assert got.column("ts").to_pylist() == [s.replace(tzinfo=UTC) for s in stamps]


def test_widened_table_reads_old_files(tmp_path: Path) -> None:
    path = tmp_path / "old.parquet"
    pq.write_table(
        pa.table(
            {
                "i": pa.array([1], pa.int32()),
                "f": pa.array([0.5], pa.float32()),
                "d": pa.array([Decimal("1.5")], pa.decimal128(3, 1)),
                "day": pa.array([dt.date(2024, 1, 2)]),
                "nested": pa.array([{"x": 1}], pa.struct([("x", pa.int16())])),
            }
        ),
        path,
    )
    nested = {"type": "struct", "fields": [_field("x", "integer"), _field("y", "string")]}
    metadata = _metadata(
        [
            _field("i", "long"),
            _field("f", "double"),
            _field("d", "decimal(10,3)"),
            _field("day", "timestamp_ntz"),
            _field("nested", nested),
            _field("added", "string"),
        ]
    )
    row = _read(path, metadata).to_pylist()[0]
    assert row == {
        "i": 1,
        "f": 0.5,
        "d": Decimal("1.500"),
        "day": dt.datetime(2024, 1, 2),
        "nested": {"x": 1, "y": None},
        "added": None,
    }


def test_parse_data_type_of_nested_json() -> None:
    text = {"type": "array", "elementType": "decimal(5,1)", "containsNull": True}
    assert conform_array(
        pa.array([[Decimal("1.0")]], pa.list_(pa.decimal128(3, 1))), parse_data_type(text), "none"
    ).type == pa.list_(pa.field("element", pa.decimal128(5, 1)))
