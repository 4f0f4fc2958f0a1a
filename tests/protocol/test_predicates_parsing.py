from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from typing import Any

import pytest

from deltaport.protocol.predicates import (
    And,
    Column,
    Comparison,
    IsNull,
    Literal,
    Not,
    Or,
    PredicateError,
    parse_json_predicate,
    parse_sql_predicate,
    parse_sql_predicates,
    predicate_to_json,
    referenced_columns,
)


def col(name: str, value_type: str) -> dict[str, Any]:
    return {"op": "column", "name": name, "valueType": value_type}


def lit(value: Any, value_type: str) -> dict[str, Any]:
    return {"op": "literal", "value": value, "valueType": value_type}


def node(op: str, *children: dict[str, Any]) -> dict[str, Any]:
    return {"op": op, "children": list(children)}


# --- JSON predicates -------------------------------------------------------------------


def test_spec_examples() -> None:
    equal = node("equal", col("hireDate", "date"), lit("2021-04-29", "date"))
    assert parse_json_predicate(json.dumps(equal)) == Comparison(
        "equal", Column("hireDate", "date"), Literal(dt.date(2021, 4, 29), "date")
    )
    both = node("and", equal, node("lessThan", col("id", "int"), lit("25", "int")))
    assert parse_json_predicate(both) == And(
        (
            Comparison("equal", Column("hireDate", "date"), Literal(dt.date(2021, 4, 29), "date")),
            Comparison("lessThan", Column("id", "int"), Literal(25, "int")),
        )
    )
    not_null = node("not", node("isNull", col("id", "int")))
    assert parse_json_predicate(not_null) == Not(IsNull(Column("id", "int")))


@pytest.mark.parametrize(
    ("value", "value_type", "parsed"),
    [
        ("true", "bool", True),
        ("FALSE", "bool", False),
        ("-2147483648", "int", -(2**31)),
        ("9223372036854775807", "long", 2**63 - 1),
        ("héllo", "string", "héllo"),
        ("", "string", ""),
        ("2021-1-2", "date", dt.date(2021, 1, 2)),
        ("1.5", "float", Decimal("1.5")),
        ("-1e-3", "double", Decimal("-0.001")),
        ("2022-01-01T10:00:00+02:00", "timestamp", dt.datetime(2022, 1, 1, 8, tzinfo=dt.UTC)),
        (
            "2022-01-01T10:00:00.123456Z",
            "timestamp",
            dt.datetime(2022, 1, 1, 10, 0, 0, 123456, tzinfo=dt.UTC),
        ),
    ],
)
def test_literal_value_types(value: str, value_type: str, parsed: object) -> None:
    tree = parse_json_predicate(node("equal", col("c", value_type), lit(value, value_type)))
    assert isinstance(tree, Comparison) and isinstance(tree.right, Literal)
    assert tree.right.value == parsed
    assert tree.right.value_type == value_type


def test_non_string_literal_values_are_accepted() -> None:
    tree = parse_json_predicate(node("equal", col("c", "long"), lit(7, "long")))
    assert tree == Comparison("equal", Column("c", "long"), Literal(7, "long"))


@pytest.mark.parametrize(
    ("predicate", "message"),
    [
        ({"op": "like", "children": []}, r"\$: unknown op 'like'"),
        ({"children": []}, r"\$: unknown op None"),
        ([1], r"\$: expected an object, found list"),
        (node("equal", col("a", "int")), r"\$: equal expects 2 children, found 1"),
        (
            node("lessThan", col("a", "int"), lit("1", "int"), lit("2", "int")),
            "lessThan expects 2 children, found 3",
        ),
        (node("and", node("isNull", col("a", "int"))), "and expects at least 2 children, found 1"),
        (node("or"), "or expects at least 2 children, found 0"),
        (node("not"), "not expects 1 child, found 0"),
        (node("isNull", col("a", "int"), col("b", "int")), "isNull expects 1 child, found 2"),
        ({"op": "not"}, "not needs a 'children' array"),
        (
            node("equal", col("a", "integer"), lit("1", "int")),
            r"\$.children\[0\]: unsupported valueType 'integer'",
        ),
        (
            node("equal", col("a", "int"), lit("x", "int")),
            r"\$.children\[1\]: cannot parse 'x' as int",
        ),
        (node("equal", col("a", "int"), lit("2147483648", "int")), "out of range"),
        (node("equal", col("a", "double"), lit("NaN", "double")), "cannot parse 'NaN' as double"),
        (
            node("equal", col("a", "date"), lit("2021-02-30", "date")),
            "cannot parse '2021-02-30' as date",
        ),
        (node("equal", col("a", "bool"), lit("yes", "bool")), "cannot parse 'yes' as bool"),
        (
            node("equal", col("a", "timestamp"), lit("2021-01-01T00:00:00", "timestamp")),
            "a zone offset is required",
        ),
        (
            node("equal", col("a", "int"), {"op": "literal", "valueType": "int"}),
            "literal needs a 'value'",
        ),
        (node("equal", col("a", "int"), lit([1], "int")), "literal value must be a string"),
        (
            node("equal", {"op": "column", "valueType": "int"}, lit("1", "int")),
            "needs a non-empty string 'name'",
        ),
        (node("equal", col("a", "int"), lit("1", "long")), "type mismatch in equal: int vs long"),
        (
            node("equal", node("isNull", col("a", "int")), lit("1", "int")),
            "equal operands must be column or literal ops",
        ),
        (
            node("isNull", node("not", col("a", "bool"))),
            "isNull operands must be column or literal",
        ),
        (
            node("and", col("a", "int"), col("b", "bool")),
            r"\$.children\[0\]: a column of type int is not a predicate",
        ),
        (col("a", "string"), r"\$: a column of type string is not a predicate"),
        (
            node(
                "or", node("isNull", col("a", "int")), node("and", node("bogus"), col("b", "bool"))
            ),
            r"\$.children\[1\].children\[0\]: unknown op 'bogus'",
        ),
        ("{", "predicate is not valid JSON"),
    ],
)
def test_invalid_json_predicates(predicate: Any, message: str) -> None:
    text = predicate if isinstance(predicate, str) else json.dumps(predicate)
    with pytest.raises(PredicateError, match=message):
        parse_json_predicate(text)


def test_depth_limit() -> None:
    tree: dict[str, Any] = col("a", "bool")
    for _ in range(101):
        tree = node("not", tree)
    with pytest.raises(PredicateError, match="deeper than 100 levels"):
        parse_json_predicate(tree)


def test_boolean_leaves_are_predicates() -> None:
    assert parse_json_predicate(col("flag", "bool")) == Column("flag", "bool")
    tree = parse_json_predicate(node("or", col("flag", "bool"), lit("false", "bool")))
    assert tree == Or((Column("flag", "bool"), Literal(False, "bool")))


def test_json_round_trip() -> None:
    original = node(
        "or",
        node(
            "greaterThanOrEqual",
            lit("2022-01-01T00:00:00+00:00", "timestamp"),
            col("ts", "timestamp"),
        ),
        node("not", node("lessThanOrEqual", col("x", "double"), lit("1.25", "double"))),
        node(
            "and",
            node("isNull", col("s.t", "string")),
            node("greaterThan", col("b", "bool"), lit("false", "bool")),
        ),
    )
    tree = parse_json_predicate(original)
    assert predicate_to_json(tree) == original
    assert parse_json_predicate(predicate_to_json(tree)) == tree
    assert [c.name for c in referenced_columns(tree)] == ["ts", "x", "s.t", "b"]


def test_untyped_columns_do_not_serialise() -> None:
    with pytest.raises(PredicateError, match="column 'a' has no value type"):
        predicate_to_json(parse_sql_predicate("a = 1"))


# --- SQL predicates --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tree"),
    [
        ("col = 123", Comparison("equal", Column("col"), Literal(123, "long"))),
        ("col > 'foo'", Comparison("greaterThan", Column("col"), Literal("foo", "string"))),
        ("'foo' < col", Comparison("lessThan", Literal("foo", "string"), Column("col"))),
        ("col >= 123", Comparison("greaterThanOrEqual", Column("col"), Literal(123, "long"))),
        ("123 <= col", Comparison("lessThanOrEqual", Literal(123, "long"), Column("col"))),
        ("col <> 'foo'", Not(Comparison("equal", Column("col"), Literal("foo", "string")))),
        (
            "col != -1.5",
            Not(Comparison("equal", Column("col"), Literal(Decimal("-1.5"), "double"))),
        ),
        ("col IS NULL", IsNull(Column("col"))),
        ("col is not null", Not(IsNull(Column("col")))),
        ("(`my col` = 'it''s')", Comparison("equal", Column("my col"), Literal("it's", "string"))),
        (
            "a.b.`c d` < 1e3",
            Comparison("lessThan", Column("a.b.c d"), Literal(Decimal("1E+3"), "double")),
        ),
        (
            "date = DATE '2021-01-01'",
            Comparison("equal", Column("date"), Literal(dt.date(2021, 1, 1), "date")),
        ),
        (
            "date = '2021-01-01'",
            Comparison("equal", Column("date"), Literal("2021-01-01", "string")),
        ),
        (
            "ts < TIMESTAMP '2021-01-01 10:00:00'",
            Comparison(
                "lessThan",
                Column("ts"),
                Literal(dt.datetime(2021, 1, 1, 10, tzinfo=dt.UTC), "timestamp"),
            ),
        ),
        ("flag = TRUE", Comparison("equal", Column("flag"), Literal(True, "bool"))),
        ("flag", Column("flag")),
        ("a = b", Comparison("equal", Column("a"), Column("b"))),
        (
            "x = 99999999999999999999",
            Comparison("equal", Column("x"), Literal(Decimal("99999999999999999999"), "double")),
        ),
        (
            "a = 1 AND (b > 2 OR NOT c IS NULL)",
            And(
                (
                    Comparison("equal", Column("a"), Literal(1, "long")),
                    Or(
                        (
                            Comparison("greaterThan", Column("b"), Literal(2, "long")),
                            Not(IsNull(Column("c"))),
                        )
                    ),
                )
            ),
        ),
    ],
)
def test_sql_predicates(text: str, tree: object) -> None:
    assert parse_sql_predicate(text) == tree


def test_sql_hint_list_is_a_conjunction() -> None:
    assert parse_sql_predicates(["a = 1"]) == Comparison("equal", Column("a"), Literal(1, "long"))
    assert parse_sql_predicates(["a = 1", "b IS NULL"]) == And(
        (Comparison("equal", Column("a"), Literal(1, "long")), IsNull(Column("b")))
    )


@pytest.mark.parametrize(
    ("hints", "message"),
    [
        ([], "no predicate hints given"),
        (
            ["a = 1", "a LIKE 'x%'"],
            r"predicateHints\[1\]: expected end of predicate, found 'LIKE' at 2",
        ),
        (["a = "], "expected a column or a literal, found end"),
        (["a = 1 b"], "expected end of predicate, found 'b' at 6"),
        (["(a = 1"], r"expected '\)', found end"),
        (["a IS 1"], "expected NULL"),
        (["a = NULL"], "comparison with NULL is never true"),
        (["a = 'unterminated"], 'unexpected character "\'" at 4'),
        (["a ; 1"], "unexpected character ';'"),
        (["a = DATE '2021-13-01'"], "bad DATE literal '2021-13-01'"),
        (["1"], "expected a comparison operator"),
        (["a."], "expected a field name after '.'"),
        (["a = - x"], "expected a number"),
        (["AND = 1"], "expected a column or a literal, found 'AND'"),
    ],
)
def test_unparsable_sql(hints: list[str], message: str) -> None:
    with pytest.raises(PredicateError, match=message):
        parse_sql_predicates(hints)
