"""Bindings: the values of the keys a view uses for one recipient. Equal values make equal
bindings with one digest; a missing property is NULL (no row matches, never every row);
values reach the SQL as literals in its syntax tree, so no property value injects SQL.
Expected rows are literals written here."""

from __future__ import annotations

import hashlib

import pyarrow as pa
import pytest
import sqlglot
from sqlglot import exp

from deltaport.views import DuckDBEngine, bind, bound_sql, define_view, run_view

ORDERS = pa.table(
    {
        "id": pa.array([1, 2, 3, 4, 5], pa.int64()),
        "region": pa.array(["eu", "us", "eu", "apac", None], pa.string()),
        "amount": pa.array([10.0, 20.0, 30.0, 40.0, 50.0], pa.float64()),
        "email": pa.array(["a@x.io", "b@x.io", None, "d@x.io", "e@x.io"], pa.string()),
    }
)
ISSUE_EXAMPLE = (
    "SELECT id, region, amount, CASE WHEN current_recipient('tier') = 'gold' THEN email "
    "ELSE sha2(email, 256) END AS email FROM raw.sales.orders "
    "WHERE region = current_recipient('region')"
)


def schema_of(name: str) -> pa.Schema | None:
    return ORDERS.schema if name == "raw.sales.orders" else None


def rows(sql: str, properties: dict[str, str]) -> list[dict[str, object]]:
    view = define_view(sql, schema_of)
    binding = bind(view, properties)
    got = run_view(DuckDBEngine(), view, binding, {"raw.sales.orders": ORDERS}).read_all()
    return sorted(got.to_pylist(), key=lambda row: str(row["id"]))


def test_the_issue_example_for_a_gold_recipient_in_eu() -> None:
    assert rows(ISSUE_EXAMPLE, {"tier": "gold", "region": "eu"}) == [
        {"id": 1, "region": "eu", "amount": 10.0, "email": "a@x.io"},
        {"id": 3, "region": "eu", "amount": 30.0, "email": None},
    ]


def test_the_issue_example_masks_for_other_tiers() -> None:
    masked = hashlib.sha256(b"b@x.io").hexdigest()
    assert rows(ISSUE_EXAMPLE, {"tier": "silver", "region": "us"}) == [
        {"id": 2, "region": "us", "amount": 20.0, "email": masked},
    ]
    assert rows(ISSUE_EXAMPLE, {"region": "us"}) == [
        {"id": 2, "region": "us", "amount": 20.0, "email": masked},
    ]


def test_a_missing_property_matches_no_row() -> None:
    assert rows(ISSUE_EXAMPLE, {"tier": "gold"}) == []
    assert rows(ISSUE_EXAMPLE, {}) == []


def test_a_missing_property_is_null_in_expressions() -> None:
    sql = (
        "SELECT id, coalesce(current_recipient('tier'), 'none') AS tier "
        "FROM raw.sales.orders WHERE id < 3"
    )
    assert rows(sql, {}) == [{"id": 1, "tier": "none"}, {"id": 2, "tier": "none"}]
    assert rows(sql, {"tier": "gold"}) == [{"id": 1, "tier": "gold"}, {"id": 2, "tier": "gold"}]


INJECTIONS = [
    "x' OR '1'='1",
    "eu' OR region IS NOT NULL OR 'a'='b",
    "eu'); DROP TABLE view_source_0; --",
    "); DROP",
    "eu\\",
    "eu\\' OR 1=1 --",
    "\\'eu\\'",
    'eu" OR "1"="1',
    "eu -- comment",
    "eu /* comment */",
    "résumé ✓ 地域 🌍",
    "eu\nOR 1=1",
    "",
]


@pytest.mark.parametrize("value", INJECTIONS)
def test_property_values_are_literals_never_sql(value: str) -> None:
    table = ORDERS.append_column("tag", pa.array([value, "eu", value, "other", None]))

    def with_tag(name: str) -> pa.Schema | None:
        return table.schema if name == "raw.sales.orders" else None

    view = define_view(
        "SELECT id, current_recipient('tag') AS echoed FROM raw.sales.orders "
        "WHERE tag = current_recipient('tag')",
        with_tag,
    )
    engine = DuckDBEngine()
    text = bound_sql(view, bind(view, {"tag": value}))
    got = engine.run(text, {view.relations["raw.sales.orders"]: table}).read_all()
    assert sorted(got.to_pylist(), key=lambda row: row["id"]) == [
        {"id": 1, "echoed": value},
        {"id": 3, "echoed": value},
    ]


@pytest.mark.parametrize("value", INJECTIONS)
def test_spark_sql_keeps_each_value_one_literal(value: str) -> None:
    """The Spark engine (next) escapes differently (backslashes); read back, its SQL holds
    the value as one string literal and the filter keeps its shape."""
    view = define_view("SELECT id FROM raw.sales.orders WHERE region = current_recipient('r')",
                       schema_of)  # fmt: skip
    spark = bound_sql(view, bind(view, {"r": value}), dialect="spark")
    back = sqlglot.parse_one(spark, read="spark")
    assert isinstance(back, exp.Select)
    where = back.args["where"].this
    assert isinstance(where, exp.EQ)
    assert isinstance(where.expression, exp.Literal)
    assert where.expression.this == value


def test_bindings_of_equal_values_are_equal_with_one_digest() -> None:
    view = define_view(ISSUE_EXAMPLE, schema_of)
    recipients = [
        {"region": f"r{index % 5}", "tier": "gold", "name": f"recipient-{index}"}
        for index in range(1000)
    ]
    bindings = {bind(view, properties) for properties in recipients}
    assert len(bindings) == 5
    assert len({binding.digest for binding in bindings}) == 5
    one = bind(view, {"region": "r1", "tier": "gold", "other": "x"})
    same = bind(view, {"tier": "gold", "region": "r1"})
    assert one == same
    assert one.digest == same.digest
    assert one.values == (("region", "r1"), ("tier", "gold"))


def test_the_digest_is_stable_and_tells_missing_from_empty() -> None:
    view = define_view(ISSUE_EXAMPLE, schema_of)
    binding = bind(view, {"region": "eu", "tier": "gold"})
    canonical = b'[["region", "eu"], ["tier", "gold"]]'
    assert binding.digest == hashlib.sha256(canonical).hexdigest()
    missing = bind(view, {"tier": "gold"})
    empty = bind(view, {"tier": "gold", "region": ""})
    assert missing.value("region") is None
    assert empty.value("region") == ""
    assert missing != empty
    assert missing.digest != empty.digest


def test_bound_sql_renames_sources_and_writes_literals_in_each_dialect() -> None:
    view = define_view(ISSUE_EXAMPLE, schema_of)
    binding = bind(view, {"region": "e'u"})
    duck = bound_sql(view, binding)
    assert '"view_source_0" AS orders' in duck
    assert "current_recipient" not in duck.lower()
    assert "'e''u'" in duck
    assert "CAST(NULL AS TEXT) = 'gold'" in duck
    spark = bound_sql(view, binding, dialect="spark")
    assert "`view_source_0` AS orders" in spark
    assert "CAST(NULL AS STRING) = 'gold'" in spark


def test_a_run_takes_each_source_by_name_and_no_other() -> None:
    view = define_view(ISSUE_EXAMPLE, schema_of)
    binding = bind(view, {"region": "eu", "tier": "gold"})
    got = run_view(DuckDBEngine(), view, binding, {"RAW.Sales.Orders": ORDERS}).read_all()
    assert got["id"].to_pylist() == [1, 3]
    for wrong in ({}, {"raw.sales.other": ORDERS}, {"raw.sales.orders": ORDERS, "x.y.z": ORDERS}):
        with pytest.raises(ValueError, match=r"the view reads raw\.sales\.orders"):
            run_view(DuckDBEngine(), view, binding, wrong)


def test_masks_give_the_hashes_spark_gives() -> None:
    """Lowercase hexadecimal digests of the UTF-8 bytes, as Spark's sha2, sha1 and md5."""
    sql = (
        "SELECT id, sha2(email, 256) AS sha256, sha1(email) AS sha1, md5(email) AS md5, "
        "regexp_replace(email, '[a-z]', '*') AS starred, substring(email, 0, 3) AS head "
        "FROM raw.sales.orders WHERE id = 1"
    )
    [row] = rows(sql, {})
    email = b"a@x.io"
    assert row == {
        "id": 1,
        "sha256": hashlib.sha256(email).hexdigest(),
        "sha1": hashlib.sha1(email).hexdigest(),
        "md5": hashlib.md5(email).hexdigest(),
        "starred": "*@*.**",
        "head": "a@x",
    }
