"""Options, type mapping, filter hints and partition packing (no Spark session needed)."""

from __future__ import annotations

import datetime as dt
import json

import pyarrow as pa
import pytest
from pyspark.sql import datasource as ds
from pyspark.sql import types as T

from deltaport.client import RemoteFile
from deltaport.protocol.predicates import parse_json_predicate
from deltaport.spark.base.options import OptionError, parse_options
from deltaport.spark.base.types import spark_schema
from deltaport.spark.reading.filters import filters_to_json
from deltaport.spark.reading.partitions import balanced_bins
from deltaport.spark.streaming.offsets import Position

INLINE = {"path": "s.d.t", "endpoint": "http://127.0.0.1:1/delta-sharing", "bearerToken": "x"}


def test_spark_types_match_arrow_exactly() -> None:
    schema = pa.schema(
        [
            pa.field("b", pa.int8()),
            pa.field("s", pa.int16(), nullable=False),
            pa.field("i", pa.int32()),
            pa.field("l", pa.int64()),
            pa.field("f", pa.float32()),
            pa.field("d", pa.float64()),
            pa.field("dec", pa.decimal128(38, 18)),
            pa.field("ts", pa.timestamp("us", tz="UTC")),
            pa.field("ntz", pa.timestamp("us")),
            pa.field("day", pa.date32()),
            pa.field("bin", pa.binary()),
            pa.field("arr", pa.list_(pa.field("element", pa.string(), nullable=False))),
            pa.field("m", pa.map_(pa.string(), pa.int64())),
            pa.field("st", pa.struct([pa.field("x", pa.bool_())])),
        ]
    )
    assert spark_schema(schema).simpleString() == (
        "struct<b:tinyint,s:smallint,i:int,l:bigint,f:float,d:double,dec:decimal(38,18),"
        "ts:timestamp,ntz:timestamp_ntz,day:date,bin:binary,arr:array<string>,"
        "m:map<string,bigint>,st:struct<x:boolean>>"
    )
    fields = spark_schema(schema).fields
    assert fields[1].nullable is False
    assert isinstance(fields[11].dataType, T.ArrayType)
    assert fields[11].dataType.containsNull is False
    with pytest.raises(TypeError, match="no Spark equivalent"):
        spark_schema(pa.schema([pa.field("u", pa.uint64())]))


def test_options_parse_and_check() -> None:
    o = parse_options(
        {
            **INLINE,
            "versionasof": "3",
            "responseformat": "DELTA",
            "maxbytespertrigger": "10m",
            "partitionbytes": "0",
        }
    )
    assert (o.table, o.version_as_of, o.use_delta_format) == ("s.d.t", 3, True)
    assert (o.max_bytes_per_trigger, o.partition_bytes) == (10 * 1024**2, 0)
    assert o.profile.endpoint == "http://127.0.0.1:1/delta-sharing"
    ts = parse_options({**INLINE, "timestampAsOf": "2024-01-01 01:30:00"}).timestamp_as_of
    assert ts == "2024-01-01T01:30:00.000Z"
    assert parse_options({**INLINE, "startingVersion": "latest"}).starting_version_latest
    for bad, message in [
        ({"versionAsOf": "1", "timestampAsOf": "2024-01-01"}, "not both"),
        ({"responseFormat": "csv"}, "parquet or delta"),
        ({"maxFilesPerTrigger": "0"}, "at least 1"),
        ({"readChangeFeed": "yes"}, "true or false"),
        ({"startingVersion": "5", "endingVersion": "2"}, "before startingVersion"),
        ({"path": "no-table"}, "<share>.<schema>.<table>"),
        ({"endpoint": ""}, "no 'endpoint'"),
    ]:
        with pytest.raises(OptionError, match=message):
            parse_options({**INLINE, **bad})


def test_filters_become_json_hints() -> None:
    schema = pa.schema(
        [
            pa.field("id", pa.int64()),
            pa.field("region", pa.string()),
            pa.field("day", pa.date32()),
            pa.field("x", pa.float64()),
            pa.field("st", pa.struct([pa.field("n", pa.int32())])),
            pa.field("bin", pa.binary()),
        ]
    )
    hint = filters_to_json(
        [
            ds.EqualTo(("region",), "eu"),
            ds.GreaterThan(("id",), 3),
            ds.In(("day",), (dt.date(2024, 1, 1), dt.date(2024, 1, 2))),
            ds.Not(ds.IsNull(("x",))),
            ds.LessThanOrEqual(("st", "n"), 7),
            ds.IsNotNull(("bin",)),
            ds.StringStartsWith(("region",), "e"),
            ds.EqualTo(("missing",), 1),
        ],
        schema,
    )
    assert hint is not None
    parsed = json.loads(hint)
    assert parsed["op"] == "and"
    assert [c["op"] for c in parsed["children"]] == [
        "equal",
        "greaterThan",
        "or",
        "not",
        "lessThanOrEqual",
        "and",  # startsWith "e": >= "e" and < "f"
    ]
    prefix = parsed["children"][5]["children"]
    assert [(c["op"], c["children"][1]["value"]) for c in prefix] == [
        ("greaterThanOrEqual", "e"),
        ("lessThan", "f"),
    ]
    assert parsed["children"][4]["children"][0] == {
        "op": "column",
        "name": "st.n",
        "valueType": "int",
    }
    parse_json_predicate(hint)
    assert filters_to_json([ds.StringContains(("region",), "u")], schema) is None
    assert filters_to_json([ds.StringStartsWith(("region",), "")], schema) is None
    assert filters_to_json([ds.StringStartsWith(("id",), "1")], schema) is None
    null_safe = json.loads(filters_to_json([ds.EqualNullSafe(("id",), 4)], schema) or "")
    assert (null_safe["op"], null_safe["children"][1]["value"]) == ("equal", "4")
    assert json.loads(filters_to_json([ds.EqualNullSafe(("id",), None)], schema) or "") == {
        "op": "isNull",
        "children": [{"op": "column", "name": "id", "valueType": "long"}],
    }


@pytest.mark.parametrize(
    ("prefix", "upper"),
    [("ab", "ac"), ("a\U0010ffff", "b"), ("\U0010ffff", None), ("\ud7ff", "\ue000")],
)
def test_a_prefix_is_the_range_below_its_successor(prefix: str, upper: str | None) -> None:
    schema = pa.schema([pa.field("s", pa.string())])
    parsed = json.loads(filters_to_json([ds.StringStartsWith(("s",), prefix)], schema) or "")
    bounds = parsed["children"] if parsed["op"] == "and" else [parsed]
    assert [c["children"][1]["value"] for c in bounds] == [prefix, *([upper] if upper else [])]
    assert all(
        value.startswith(prefix) == (prefix <= value < (upper or "\U0010ffff\U0010ffff"))
        for value in (prefix, prefix + "z", upper or "", "a", "b", "ab\U0010ffff")
    )
    assert filters_to_json([ds.EqualTo(("x",), float("nan"))], schema) is None


def _file(i: int, size: int) -> RemoteFile:
    return RemoteFile(id=str(i), url=f"http://h/{i}", size=size)


def test_balanced_bins() -> None:
    files = [_file(i, s) for i, s in enumerate([100, 10, 60, 50, 40, 30])]
    bins = balanced_bins(files, target_bytes=150, min_partitions=1)
    assert len(bins) == 2
    assert sorted(sum(f.size for f in b) for b in bins) == [140, 150]
    assert all([f.id for f in b] == sorted((f.id for f in b), key=int) for b in bins)
    assert len(balanced_bins(files, target_bytes=10**9, min_partitions=4)) == 4
    assert [len(b) for b in balanced_bins(files, 0, 1)] == [1] * 6
    assert balanced_bins([], 100, 2) == []


def test_offsets_round_trip() -> None:
    p = Position(4, 2, snapshot=True)
    assert Position.from_offset(json.loads(json.dumps(p.to_offset()))) == p
    assert Position(3, 5) < Position(4, 0)
    with pytest.raises(ValueError, match="not a deltaSharing offset"):
        Position.from_offset({"offset": 1})
