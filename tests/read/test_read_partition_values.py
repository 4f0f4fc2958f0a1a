"""Serialised partition values -> typed Arrow values, and partitioned tables end to end."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Any

import deltalake
import pyarrow as pa
import pytest
from read_compare import first_difference, same_rows

from deltaport.delta.table import DeltaTable
from deltaport.protocol.schema import (
    ArrayType,
    DataType,
    DecimalType,
    PrimitiveType,
    StructField,
)
from deltaport.read import parse_partition_values, scan_snapshot, table_arrow_schema
from deltaport.read.partition_values import partition_columns

UTC = dt.UTC


def _parse(values: list[str | None], data_type: DataType) -> list[Any]:
    return parse_partition_values(pa.array(values, pa.string()), data_type).to_pylist()


@pytest.mark.parametrize(
    ("type_name", "values", "expected"),
    [
        ("byte", ["-128", "127"], [-128, 127]),
        ("short", ["-32768", "7"], [-32768, 7]),
        ("integer", ["2147483647", "-1"], [2147483647, -1]),
        ("long", ["9223372036854775807", "0"], [9223372036854775807, 0]),
        ("boolean", ["true", "false", "TRUE"], [True, False, True]),
        (
            "string",
            ["a b", "a%20b", "null", "😈", "a=b/c"],
            ["a b", "a%20b", "null", "😈", "a=b/c"],
        ),
        ("binary", ["\u0001\u0002", "ab"], [b"\x01\x02", b"ab"]),
        ("date", ["2021-01-01", "1969-12-31"], [dt.date(2021, 1, 1), dt.date(1969, 12, 31)]),
    ],
)
def test_simple_types(type_name: str, values: list[str], expected: list[Any]) -> None:
    assert _parse(values, PrimitiveType(type_name)) == expected


def test_floating_point_specials() -> None:
    parsed = _parse(["1.5", "NaN", "Infinity", "-Infinity", "-0.0"], PrimitiveType("double"))
    assert parsed[0] == 1.5 and parsed[1] != parsed[1]
    assert parsed[2:4] == [float("inf"), float("-inf")]
    assert str(parsed[4]) == "-0.0"
    assert _parse(["3.25"], PrimitiveType("float")) == [3.25]


@pytest.mark.parametrize(
    "type_",
    [*(PrimitiveType(n) for n in ("integer", "string", "date", "timestamp")), DecimalType(5, 2)],
)
def test_null_and_empty_are_null_for_every_type(type_: DataType) -> None:
    assert _parse([None, ""], type_) == [None, None]


def test_decimals_keep_scale() -> None:
    parsed = _parse(["-2342342.23423", "1", "0.5"], DecimalType(20, 5))
    assert parsed == [Decimal("-2342342.23423"), Decimal("1.00000"), Decimal("0.50000")]


def test_timestamps_without_zone_are_utc() -> None:
    parsed = _parse(
        [
            "2021-01-01 00:00:00",
            "2020-01-01 08:09:10.001",
            "2013-07-05 17:01:00.123456",
            "1969-01-01 00:00:00",
        ],
        PrimitiveType("timestamp"),
    )
    assert parsed == [
        dt.datetime(2021, 1, 1, tzinfo=UTC),
        dt.datetime(2020, 1, 1, 8, 9, 10, 1000, tzinfo=UTC),
        dt.datetime(2013, 7, 5, 17, 1, 0, 123456, tzinfo=UTC),
        dt.datetime(1969, 1, 1, tzinfo=UTC),
    ]


def test_timestamps_with_zone_are_converted_to_utc() -> None:
    parsed = _parse(
        ["2024-01-01T10:00:00.000000Z", "2024-01-01T10:00:00+02:00"], PrimitiveType("timestamp")
    )
    assert parsed == [
        dt.datetime(2024, 1, 1, 10, tzinfo=UTC),
        dt.datetime(2024, 1, 1, 8, tzinfo=UTC),
    ]


def test_timestamp_ntz_is_wall_clock() -> None:
    parsed = _parse(
        ["2013-07-05 17:01:00.123456", "2021-11-18 02:30:00"], PrimitiveType("timestamp_ntz")
    )
    assert parsed == [dt.datetime(2013, 7, 5, 17, 1, 0, 123456), dt.datetime(2021, 11, 18, 2, 30)]


def test_invalid_values_raise() -> None:
    with pytest.raises(ValueError, match="integer"):
        _parse(["x"], PrimitiveType("integer"))
    with pytest.raises(ValueError, match="primitive"):
        _parse(["x"], ArrayType(PrimitiveType("string")))


def test_partition_columns_by_physical_or_logical_key() -> None:
    values = pa.array(
        [[("col-1", "5"), ("p", "x")], [("p", None)], []],
        pa.map_(pa.string(), pa.string()),
    )
    field = StructField(
        "p", PrimitiveType("integer"), metadata={"delta.columnMapping.physicalName": "col-1"}
    )
    assert partition_columns(values, [field], physical=True)["p"].to_pylist() == [5, None, None]
    plain = StructField("p", PrimitiveType("string"))
    assert partition_columns(values, [plain], physical=False)["p"].to_pylist() == ["x", None, None]


def test_partitioned_table_with_special_characters_and_nulls(tmp_path: Path) -> None:
    data = pa.table(
        {
            "id": pa.array([1, 2, 3, 4, 5], pa.int64()),
            "s": pa.array(["a b", "a%2Fb", "😈", None, "x=y&z"]),
            "d": pa.array([dt.date(2021, 1, 1), None, dt.date(2020, 2, 29)] * 1 + [None, None]),
            "n": pa.array([1, None, 3, 4, None], pa.int32()),
        }
    )
    deltalake.write_deltalake(str(tmp_path), data, partition_by=["s", "d", "n"])
    delta = DeltaTable(str(tmp_path))
    snapshot = delta.snapshot()
    got = pa.Table.from_batches(
        list(scan_snapshot(snapshot, delta.storage)), schema=table_arrow_schema(snapshot.metadata)
    )
    expected = deltalake.DeltaTable(str(tmp_path)).to_pyarrow_table()
    columns = ["id", "s", "d", "n"]
    assert same_rows(expected, got, columns), first_difference(expected, got, columns)
    assert sorted(got.column("s").to_pylist(), key=str) == sorted(
        ["a b", "a%2Fb", "😈", None, "x=y&z"], key=str
    )
