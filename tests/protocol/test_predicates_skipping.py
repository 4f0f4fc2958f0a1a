from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest

from deltaport.delta.model import FILE_SCHEMA
from deltaport.protocol.predicates import (
    Column,
    Comparison,
    Literal,
    file_mask,
    parse_json_predicate,
    parse_sql_predicates,
)

TYPES = {
    "id": "integer",
    "amount": "decimal(10,2)",
    "name": "string",
    "day": "date",
    "ts": "timestamp",
    "ntz": "timestamp_ntz",
    "ratio": "float",
    "score": "double",
    "flag": "boolean",
    "nested.inner": "long",
    "blob": "binary",
    "region": "string",
    "year": "integer",
}
PARTITIONS = ["region", "year"]


def stats(
    num_records: int | None,
    mins: dict[str, Any] | None = None,
    maxs: dict[str, Any] | None = None,
    nulls: dict[str, Any] | None = None,
) -> str:
    obj: dict[str, Any] = {}
    if num_records is not None:
        obj["numRecords"] = num_records
    for key, value in (("minValues", mins), ("maxValues", maxs), ("nullCount", nulls)):
        if value is not None:
            obj[key] = value
    return json.dumps(obj)


def files(*entries: tuple[dict[str, str | None], str | None]) -> pa.Table:
    return pa.Table.from_pylist(
        [
            {"path": f"f{i}", "partition_values": list(pv.items()), "stats": st}
            for i, (pv, st) in enumerate(entries)
        ],
        schema=FILE_SCHEMA,
    )


def mask(hints: list[str] | dict[str, Any], table: pa.Table, **kwargs: Any) -> list[bool]:
    expr = parse_sql_predicates(hints) if isinstance(hints, list) else parse_json_predicate(hints)
    result = file_mask(expr, table, TYPES, PARTITIONS, **kwargs)
    assert isinstance(result, pa.BooleanArray)
    assert result.null_count == 0
    return result.to_pylist()


ID_FILES = files(
    ({}, stats(3, {"id": 1}, {"id": 5}, {"id": 0})),  # 1..5
    ({}, stats(3, {"id": 5}, {"id": 5}, {"id": 1})),  # 5 and a null
    ({}, stats(2, {}, {}, {"id": 2})),  # all null
    ({}, None),  # no stats
    ({}, stats(3, {"name": "a"}, {"name": "b"}, {"name": 0})),  # no stats for id
    ({}, stats(0, {}, {}, {"id": 0})),  # empty file
)


@pytest.mark.parametrize(
    ("hint", "expected"),
    [
        ("id = 5", [True, True, False, True, True, False]),
        ("id = 0", [False, False, False, True, True, False]),
        ("id < 5", [True, False, False, True, True, False]),
        ("id <= 5", [True, True, False, True, True, False]),
        ("id > 5", [False, False, False, True, True, False]),
        ("id >= 5", [True, True, False, True, True, False]),
        ("5 > id", [True, False, False, True, True, False]),
        ("id <> 5", [True, False, False, True, True, False]),
        ("NOT id = 5", [True, False, False, True, True, False]),
        ("NOT id > 0", [False, False, False, True, True, False]),
        ("NOT NOT id > 5", [False, False, False, True, True, False]),
        ("id IS NULL", [False, True, True, True, True, False]),
        ("id IS NOT NULL", [True, True, False, True, True, False]),
        ("NOT id IS NULL", [True, True, False, True, True, False]),
        ("id = 5 AND id IS NULL", [False, True, False, True, True, False]),
        ("id < 2 OR id > 4", [True, True, False, True, True, False]),
        ("NOT (id < 2 OR id > 4)", [True, False, False, True, True, False]),
        ("id = 1.5", [True, False, False, True, True, False]),
        ("id > 4.5", [True, True, False, True, True, False]),
        ("id = '5'", [True, True, False, True, True, False]),
        ("id = 'five'", [True] * 6),
        ("unknown_column = 1", [True] * 6),
        ("NOT unknown_column = 1", [True] * 6),
        ("unknown_column = 1 AND id > 5", [False, False, False, True, True, False]),
        ("unknown_column = 1 OR id > 5", [True] * 6),
        ("id = id", [True] * 6),
        ("1 = 1", [True] * 6),
        ("TRUE", [True] * 6),
        ("NOT TRUE", [False] * 6),
    ],
)
def test_integer_stats(hint: str, expected: list[bool]) -> None:
    assert mask([hint], ID_FILES) == expected


def test_not_over_a_range_is_not_negation_of_the_range_test() -> None:
    # id in [1, 5]: "id = 3" may be true, and "NOT id = 3" may be true as well.
    assert mask(["id = 3"], ID_FILES)[0]
    assert mask(["NOT id = 3"], ID_FILES)[0]
    single = files(({}, stats(2, {"id": 3}, {"id": 3}, {"id": 0})))
    assert mask(["NOT id = 3"], single) == [False]
    assert mask(["NOT id <> 3"], single) == [True]


PARTITION_FILES = files(
    ({"region": "eu", "year": "2021"}, None),
    ({"region": "us", "year": "2022"}, None),
    ({"region": "", "year": None}, None),  # both null
    ({"region": "eu", "year": "x"}, None),  # unparsable year
    ({}, None),  # keys missing: null
)


@pytest.mark.parametrize(
    ("hint", "expected"),
    [
        ("region = 'eu'", [True, False, False, True, False]),
        ("region <> 'eu'", [False, True, False, False, False]),
        ("region IS NULL", [False, False, True, False, True]),
        ("region IS NOT NULL", [True, True, False, True, False]),
        ("year > 2021", [False, True, False, True, False]),
        ("year = '2021'", [True, False, False, True, False]),
        ("NOT year > 2021", [True, False, False, True, False]),
        ("year IS NULL", [False, False, True, False, True]),
        ("year >= 2021.5", [False, True, False, True, False]),
        ("region = 'eu' AND year = 2022", [False, False, False, True, False]),
        ("region = 'us' OR year = 2021", [True, True, False, True, False]),
    ],
)
def test_partition_values(hint: str, expected: list[bool]) -> None:
    assert mask([hint], PARTITION_FILES) == expected


def test_partition_values_compare_numerically_not_as_text() -> None:
    table = files(({"year": "10"}, None), ({"year": "9"}, None))
    assert mask(["year > 9"], table) == [True, False]
    assert mask(["year < '10'"], table) == [False, True]


def test_dates_compare_as_dates() -> None:
    table = files(
        ({}, stats(1, {"day": "2021-01-09"}, {"day": "2021-01-10"}, {"day": 0})),
        ({}, stats(1, {"day": "2021-01-01"}, {"day": "2021-01-02"}, {"day": 0})),
    )
    assert mask(["day > '2021-01-05'"], table) == [True, False]
    assert mask(["day = DATE '2021-01-02'"], table) == [False, True]
    json_hint = {
        "op": "lessThan",
        "children": [
            {"op": "column", "name": "day", "valueType": "date"},
            {"op": "literal", "value": "2021-01-05", "valueType": "date"},
        ],
    }
    assert mask(json_hint, table) == [False, True]
    assert mask(["day > 'not a date'"], table) == [True, True]
    assert mask(["day > 5"], table) == [True, True]


def test_timestamps_allow_for_millisecond_truncated_stats() -> None:
    table = files(
        (
            {},
            stats(
                1,
                {"ts": "2021-01-01T00:00:00.000Z", "ntz": "2021-01-01T00:00:00.000"},
                {"ts": "2021-01-01T00:00:00.001Z", "ntz": "2021-01-01T00:00:00.001"},
                {"ts": 0, "ntz": 0},
            ),
        ),
        (
            {},
            stats(
                1,
                {"ts": "2021-01-01T02:00:00.000+01:00"},
                {"ts": "2021-01-01T02:00:00.000+01:00"},
                {"ts": 0},
            ),
        ),
    )
    # the real max may be up to 2021-01-01T00:00:00.001999
    assert mask(["ts > '2021-01-01 00:00:00.0015'"], table) == [True, True]
    assert mask(["ts > '2021-01-01 00:00:00.002'"], table) == [False, True]
    assert mask(["ts < '2021-01-01 01:00:00'"], table) == [True, False]
    assert mask(["ts < '2021-01-01'"], table) == [False, False]
    assert mask(["ts <= '2021-01-01'"], table) == [True, False]
    assert mask(["ts = TIMESTAMP '2021-01-01 01:00:00'"], table) == [False, True]
    json_hint = {
        "op": "greaterThan",
        "children": [
            {"op": "column", "name": "ts", "valueType": "timestamp"},
            {"op": "literal", "value": "2021-01-01T02:30:00+02:00", "valueType": "timestamp"},
        ],
    }
    assert mask(json_hint, table) == [False, True]
    assert mask(["ntz >= '2021-01-01 00:00:00.001999'"], table) == [True, True]
    assert mask(["ntz > '2021-01-01 00:00:00.002'"], table) == [False, True]


def test_strings_with_truncated_max_are_not_upper_bounds() -> None:
    prefix = "p" * 32
    table = files(
        ({}, stats(2, {"name": "a"}, {"name": prefix}, {"name": 0})),
        ({}, stats(2, {"name": "a"}, {"name": "b"}, {"name": 0})),
    )
    assert mask([f"name > '{prefix}'"], table) == [True, False]
    assert mask(["name >= 'c'"], table) == [True, False]
    assert mask(["name < 'a'"], table) == [False, False]
    assert mask(["name = 5"], table) == [True, True]


def test_decimals_compare_exactly() -> None:
    table = files(
        ({}, stats(1, {"amount": 10.1}, {"amount": 12345678.99}, {"amount": 0})),
        ({}, stats(1, {"amount": 0.01}, {"amount": 0.02}, {"amount": 0})),
    )
    assert mask(["amount > 12345678.98"], table) == [True, False]
    assert mask(["amount > 12345678.99"], table) == [False, False]
    assert mask(["amount >= 12345678.99"], table) == [True, False]
    assert mask(["amount = 0.015"], table) == [False, True]
    assert mask(["amount < 0.01"], table) == [False, False]
    assert mask(["amount <= 0.01"], table) == [False, True]
    assert mask(["amount = 11"], table) == [True, False]
    assert mask(["amount = 10"], table) == [False, False]


def test_float_stats_are_read_as_float32() -> None:
    # a float column holding 0.1f (0.10000000149...) has stats printed as 0.1
    table = files(({}, stats(1, {"ratio": 0.1, "score": 0.1}, {"ratio": 0.1, "score": 0.1}, {})))
    assert mask(["ratio > 0.1"], table) == [True]
    assert mask(["score > 0.1"], table) == [False]
    as_float = {
        "op": "equal",
        "children": [
            {"op": "column", "name": "ratio", "valueType": "float"},
            {"op": "literal", "value": "0.1", "valueType": "float"},
        ],
    }
    assert mask(as_float, table) == [True]


def test_float_nan_stats_and_negation() -> None:
    table = files(
        ({}, '{"numRecords": 2, "minValues": {"score": "NaN"}, "maxValues": {"score": "NaN"}}'),
        ({}, stats(2, {"score": 1.0}, {"score": 2.0}, {"score": 0})),
    )
    assert mask(["score > 5"], table) == [True, False]
    # a NaN row (not reflected in min/max) makes "score > 5" false, so NOT may be true
    assert mask(["NOT score > 1"], table) == [True, True]


def test_boolean_columns() -> None:
    table = files(
        ({}, stats(2, {"flag": False}, {"flag": False}, {"flag": 0})),
        ({}, stats(2, {"flag": True}, {"flag": True}, {"flag": 0})),
        ({}, stats(2, {"flag": False}, {"flag": True}, {"flag": 0})),
    )
    assert mask(["flag"], table) == [False, True, True]
    assert mask(["NOT flag"], table) == [True, False, True]
    assert mask(["flag = FALSE"], table) == [True, False, True]
    assert mask({"op": "column", "name": "flag", "valueType": "bool"}, table) == [False, True, True]


def test_nested_columns_and_column_mapping() -> None:
    table = files(
        (
            {},
            stats(1, {"nested": {"inner": 1}}, {"nested": {"inner": 2}}, {"nested": {"inner": 0}}),
        ),
        (
            {},
            stats(1, {"nested": {"inner": 8}}, {"nested": {"inner": 9}}, {"nested": {"inner": 0}}),
        ),
        ({}, stats(1, {"nested": None}, {"nested": 3}, {"nested": {"inner": 0}})),
    )
    assert mask(["nested.inner > 5"], table) == [False, True, True]
    assert mask(["`nested`.`inner` IS NULL"], table) == [False, False, False]
    mapped = files(
        ({"col-b2": "eu"}, stats(1, {"col-a1": {"col-c3": 1}}, {"col-a1": {"col-c3": 2}}, {})),
        ({"col-b2": "us"}, stats(1, {"col-a1": {"col-c3": 8}}, {"col-a1": {"col-c3": 9}}, {})),
    )
    physical = {"nested.inner": "col-a1.col-c3", "region": "col-b2"}
    assert mask(["nested.inner > 5"], mapped, physical_names=physical) == [False, True]
    assert mask(["region = 'eu'"], mapped, physical_names=physical) == [True, False]
    assert mask(["nested.inner > 5"], mapped) == [True, True]


def test_malformed_or_mistyped_stats_only_affect_their_file() -> None:
    table = files(
        ({}, "{not json"),
        ({}, stats(1, {"id": "seven"}, {"id": "eight"}, {"id": 0})),
        ({}, stats(1, {"id": 1}, {"id": 2}, {"id": 0})),
        ({}, "[1, 2]"),
        ({}, '{"numRecords": 1,\n "minValues": {"id": 7}, "maxValues": {"id": 7}}'),
        ({}, ""),
        ({}, stats(1, {"id": 1.5}, {"id": 2.5}, {"id": 0})),
        (
            {},
            '{"numRecords": "1", "minValues": {"id": 1}, "maxValues": {"id": 2},'
            ' "nullCount": {"id": "x"}}',
        ),
    )
    assert mask(["id > 5"], table) == [True, True, False, True, True, True, True, False]
    assert mask(["id IS NULL"], table) == [True, False, False, True, True, True, False, True]


def test_unsupported_types_and_comparisons_keep_files() -> None:
    table = files(({}, stats(1, {"blob": "AA=="}, {"blob": "AA=="}, {"blob": 1})))
    assert mask(["blob = 'x'"], table) == [True]
    assert mask(["blob IS NULL"], table) == [True]
    assert mask(["blob IS NOT NULL"], table) == [False]
    json_hint = {
        "op": "equal",
        "children": [
            {"op": "column", "name": "name", "valueType": "int"},
            {"op": "literal", "value": "1", "valueType": "int"},
        ],
    }
    assert mask(json_hint, files(({}, stats(1, {"name": "a"}, {"name": "b"}, {})))) == [True]


def test_empty_file_table() -> None:
    empty = files()
    assert mask(["id > 1"], empty) == []


def test_record_batches_and_chunked_tables() -> None:
    table = pa.concat_tables([ID_FILES.slice(0, 2), ID_FILES.slice(2)])
    assert table.column("stats").num_chunks == 2
    expected = mask(["id > 4"], ID_FILES)
    assert mask(["id > 4"], table) == expected
    batch = ID_FILES.to_batches()[0]
    expr = Comparison("greaterThan", Column("id"), Literal(4, "long"))
    assert file_mask(expr, batch, TYPES, PARTITIONS).to_pylist() == expected


def test_one_malformed_stats_among_many_files() -> None:
    good = [({}, stats(1, {"id": i}, {"id": i}, {"id": 0})) for i in range(300)]
    good[123] = ({}, '{"numRecords": 1, "minValues": {"id": "bad"}, "maxValues": {"id": 1}}')
    good[250] = ({}, "{broken")
    result = mask(["id >= 290"], files(*good))
    # 123: its max (1) is still a valid upper bound; 250: no stats at all
    assert [i for i, keep in enumerate(result) if keep] == [250, *range(290, 300)]
