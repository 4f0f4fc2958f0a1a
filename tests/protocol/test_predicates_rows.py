from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

from deltaport.protocol.predicates import (
    PredicateError,
    evaluate_rows,
    parse_json_predicate,
    parse_sql_predicates,
)

TABLE = pa.table(
    {
        "id": pa.array([1, 2, None, 4], pa.int32()),
        "name": pa.array(["a", None, "c", "10"]),
        "day": pa.array([dt.date(2021, 1, 1), dt.date(2021, 1, 2), None, dt.date(2021, 1, 4)]),
        "ts": pa.array(
            [
                dt.datetime(2021, 1, 1, tzinfo=dt.UTC),
                None,
                dt.datetime(2021, 1, 3, tzinfo=dt.UTC),
                None,
            ],
            pa.timestamp("ns", "UTC"),
        ),
        "amount": pa.array(
            [Decimal("1.10"), Decimal("2.20"), None, Decimal("0.01")], pa.decimal128(10, 2)
        ),
        "ratio": pa.array([0.1, float("nan"), None, 2.5], pa.float32()),
        "flag": pa.array([True, False, None, True]),
        "st": pa.array([{"x": 1}, None, {"x": 3}, {"x": None}], pa.struct([("x", pa.int64())])),
        "cat": pa.array(["u", "v", "u", None]).dictionary_encode(),
    }
)


def rows(hints: list[str] | dict[str, Any]) -> list[bool]:
    expr = parse_sql_predicates(hints) if isinstance(hints, list) else parse_json_predicate(hints)
    result = evaluate_rows(expr, TABLE)
    assert result.null_count == 0
    return result.to_pylist()


@pytest.mark.parametrize(
    ("hint", "expected"),
    [
        ("id = 2", [False, True, False, False]),
        ("id <> 2", [True, False, False, True]),
        ("NOT id = 2", [True, False, False, True]),
        ("id IS NULL", [False, False, True, False]),
        ("id IS NOT NULL", [True, True, False, True]),
        ("id > 1.5", [False, True, False, True]),
        ("id >= '2'", [False, True, False, True]),
        ("id = 2 OR id IS NULL", [False, True, True, False]),
        ("NOT (id = 2 OR name = 'zz')", [True, False, False, True]),
        ("name > 'b'", [False, False, True, False]),
        ("name < 'b'", [True, False, False, True]),
        ("day >= '2021-01-02'", [False, True, False, True]),
        ("day = DATE '2021-01-04'", [False, False, False, True]),
        ("ts < '2021-01-02 00:00:00'", [True, False, False, False]),
        ("ts >= TIMESTAMP '2021-01-03T00:00:00Z'", [False, False, True, False]),
        ("amount >= 1.1", [True, True, False, False]),
        ("amount = 0.01", [False, False, False, True]),
        ("amount < 1", [False, False, False, True]),
        ("ratio > 0.1", [True, False, False, True]),
        ("NOT ratio > 1", [True, True, False, False]),
        ("flag", [True, False, False, True]),
        ("NOT flag", [False, True, False, False]),
        ("st.x >= 1", [True, False, True, False]),
        ("st.x IS NULL", [False, True, False, True]),
        ("cat = 'u'", [True, False, True, False]),
        ("id = id", [True, True, False, True]),
        ("1 = 1", [True, True, True, True]),
    ],
)
def test_sql_semantics(hint: str, expected: list[bool]) -> None:
    assert rows([hint]) == expected


def test_json_column_is_cast_to_its_value_type() -> None:
    as_int = {
        "op": "greaterThan",
        "children": [
            {"op": "column", "name": "name", "valueType": "int"},
            {"op": "literal", "value": "9", "valueType": "int"},
        ],
    }
    assert rows(as_int) == [False, False, False, True]
    as_string = {
        "op": "lessThan",
        "children": [
            {"op": "column", "name": "id", "valueType": "string"},
            {"op": "literal", "value": "2", "valueType": "string"},
        ],
    }
    assert rows(as_string) == [True, False, False, False]


def test_float_literal_is_single_precision() -> None:
    hint = {
        "op": "equal",
        "children": [
            {"op": "column", "name": "ratio", "valueType": "float"},
            {"op": "literal", "value": "0.1", "valueType": "float"},
        ],
    }
    assert rows(hint) == [True, False, False, False]
    assert rows(["ratio = 0.1"]) == [False, False, False, False]


@pytest.mark.parametrize(
    ("hint", "message"),
    [
        ("missing = 1", "unknown column 'missing'"),
        ("st.missing = 1", "unknown column 'st.missing'"),
        ("name", "column 'name' of type string is not a predicate"),
        ("day = st", "cannot compare 'day' with 'st'"),
    ],
)
def test_errors(hint: str, message: str) -> None:
    with pytest.raises(PredicateError, match=message):
        rows([hint])


def test_empty_table() -> None:
    expr = parse_sql_predicates(["id > 1"])
    assert evaluate_rows(expr, TABLE.slice(0, 0)).to_pylist() == []
