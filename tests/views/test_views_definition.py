"""A view's SQL checked when it is defined: every refusal kind names the offending part;
the result says its sources, the recipient keys it uses, its output schema and its shape."""

from __future__ import annotations

import pyarrow as pa
import pytest

from deltaport.views import Refusal, Shape, ViewDefinitionError, define_view

ORDERS = pa.schema(
    [
        ("id", pa.int64()),
        ("region", pa.string()),
        ("amount", pa.float64()),
        ("email", pa.string()),
        ("placed", pa.date32()),
    ]
)
CUSTOMERS = pa.schema([("id", pa.int64()), ("name", pa.string()), ("tier", pa.string())])
TABLES = {"raw.sales.orders": ORDERS, "raw.sales.customers": CUSTOMERS}

ISSUE_EXAMPLE = (
    "SELECT id, region, amount, CASE WHEN current_recipient('tier') = 'gold' THEN email "
    "ELSE sha2(email, 256) END AS email FROM raw.sales.orders "
    "WHERE region = current_recipient('region')"
)


def schema_of(name: str) -> pa.Schema | None:
    return TABLES.get(name)


def test_the_issue_example_is_a_row_local_view() -> None:
    view = define_view(ISSUE_EXAMPLE, schema_of)
    assert view.sources == ("raw.sales.orders",)
    assert view.recipient_keys == {"tier", "region"}
    assert view.shape is Shape.ROW_LOCAL
    assert view.output_schema == pa.schema(
        [("id", pa.int64()), ("region", pa.string()), ("amount", pa.float64()),
         ("email", pa.string())]
    )  # fmt: skip
    assert view.sql == ISSUE_EXAMPLE


def test_definitions_of_the_same_sql_are_equal() -> None:
    assert define_view(ISSUE_EXAMPLE, schema_of) == define_view(ISSUE_EXAMPLE, schema_of)


def test_output_types_follow_the_expressions() -> None:
    view = define_view(
        "SELECT CAST(id AS STRING) AS id_text, amount * 2 AS doubled, year(placed) AS year, "
        "concat(region, '-', email) AS label, coalesce(email, 'none') AS email "
        "FROM raw.sales.orders",
        schema_of,
    )
    assert [(f.name, f.type) for f in view.output_schema] == [
        ("id_text", pa.string()),
        ("doubled", pa.float64()),
        ("year", pa.int64()),
        ("label", pa.string()),
        ("email", pa.string()),
    ]


def test_an_expression_over_a_recipient_property_is_typed_as_a_string_would_make_it() -> None:
    view = define_view(
        "SELECT concat(id, current_recipient('tag')) AS tagged FROM raw.sales.orders", schema_of
    )
    assert view.output_schema == pa.schema([("tagged", pa.string())])


def test_a_star_keeps_the_source_columns() -> None:
    view = define_view("SELECT * FROM raw.sales.orders", schema_of)
    assert view.output_schema == ORDERS
    assert view.recipient_keys == frozenset()


@pytest.mark.parametrize(
    ("sql", "shape"),
    [
        ("SELECT id, upper(email) AS email FROM raw.sales.orders WHERE amount > 10", "row_local"),
        ("SELECT * FROM raw.sales.orders", "row_local"),
        (
            "SELECT o.id, c.name FROM raw.sales.orders o JOIN raw.sales.customers c ON o.id = c.id",
            "whole",
        ),
        ("SELECT region, sum(amount) AS total FROM raw.sales.orders GROUP BY region", "whole"),
        ("SELECT count(*) AS n FROM raw.sales.orders", "whole"),
        ("SELECT DISTINCT region FROM raw.sales.orders", "whole"),
        ("SELECT id FROM raw.sales.orders ORDER BY id", "whole"),
        ("SELECT id FROM raw.sales.orders LIMIT 5", "whole"),
        ("SELECT id, max(amount) OVER (PARTITION BY region) AS top FROM raw.sales.orders", "whole"),
        ("SELECT id FROM raw.sales.orders UNION ALL SELECT id FROM raw.sales.customers", "whole"),
        (
            "SELECT id FROM raw.sales.orders WHERE amount > (SELECT avg(amount) AS a "
            "FROM raw.sales.orders)",
            "whole",
        ),
        ("WITH o AS (SELECT id FROM raw.sales.orders) SELECT id FROM o", "whole"),
    ],
)
def test_the_shape_says_how_it_is_materialized(sql: str, shape: str) -> None:
    assert define_view(sql, schema_of).shape is Shape(shape)


def test_a_join_using_its_key_once_keeps_every_column() -> None:
    view = define_view(
        "SELECT * FROM raw.sales.orders JOIN raw.sales.customers USING (id)", schema_of
    )
    assert view.output_schema.names == ["id", "region", "amount", "email", "placed", "name",
                                        "tier"]  # fmt: skip


def test_a_join_names_both_sources_in_order() -> None:
    view = define_view(
        "SELECT o.id, c.name FROM raw.sales.orders o JOIN raw.sales.customers c ON o.id = c.id "
        "WHERE c.tier = current_recipient('tier')",
        schema_of,
    )
    assert view.sources == ("raw.sales.orders", "raw.sales.customers")
    assert view.recipient_keys == {"tier"}


@pytest.mark.parametrize(
    ("sql", "reason", "named"),
    [
        ("SELEC id FROM raw.sales.orders", Refusal.SYNTAX, "syntax error"),
        ("SELECT id FROM raw.sales.orders WHERE (", Refusal.SYNTAX, "syntax error"),
        ("", Refusal.SYNTAX, "no statement"),
        (
            "SELECT id FROM raw.sales.orders; DROP TABLE raw.sales.orders",
            Refusal.STATEMENTS,
            "DROP TABLE",
        ),
        ("SELECT 1 AS a; SELECT 2 AS b", Refusal.STATEMENTS, "SELECT 2"),
        ("DROP TABLE raw.sales.orders", Refusal.NOT_SELECT, "DROP"),
        ("INSERT INTO raw.sales.orders SELECT * FROM raw.sales.orders", Refusal.NOT_SELECT,
         "INSERT"),
        ("DELETE FROM raw.sales.orders", Refusal.NOT_SELECT, "DELETE"),
        ("SELECT explode(array(1, 2)) AS x FROM raw.sales.orders", Refusal.FUNCTION, "explode"),
        ("SELECT my_udf(email) AS x FROM raw.sales.orders", Refusal.FUNCTION, "my_udf"),
        ("SELECT id, row_number() OVER (ORDER BY id) AS r FROM raw.sales.orders", Refusal.FUNCTION,
         "row_number"),
        ("SELECT * FROM read_parquet('/etc/passwd')", Refusal.FUNCTION, "read_parquet"),
        ("SELECT sha2(email, 512) AS h FROM raw.sales.orders", Refusal.FUNCTION, "sha2"),
        ("SELECT sha2(email, 0) AS h FROM raw.sales.orders", Refusal.FUNCTION, "sha2"),
        ("SELECT base64(email) AS h FROM raw.sales.orders", Refusal.FUNCTION, "base64"),
        ("SELECT id, rand() AS r FROM raw.sales.orders", Refusal.NON_DETERMINISTIC, "rand"),
        ("SELECT id, random() AS r FROM raw.sales.orders", Refusal.NON_DETERMINISTIC, "rand"),
        ("SELECT id, uuid() AS u FROM raw.sales.orders", Refusal.NON_DETERMINISTIC, "uuid"),
        ("SELECT id, now() AS t FROM raw.sales.orders", Refusal.NON_DETERMINISTIC,
         "current_timestamp"),
        ("SELECT id FROM raw.sales.orders WHERE placed < current_date()",
         Refusal.NON_DETERMINISTIC, "current_date"),
        ("SELECT id, current_timestamp() AS t FROM raw.sales.orders", Refusal.NON_DETERMINISTIC,
         "current_timestamp"),
        ("SELECT id FROM raw.sales.orders TABLESAMPLE (10 PERCENT)", Refusal.NON_DETERMINISTIC,
         "TABLESAMPLE"),
        ("SELECT id FROM raw.sales.missing", Refusal.UNKNOWN_TABLE, "raw.sales.missing"),
        ("SELECT id FROM orders", Refusal.UNKNOWN_TABLE, "orders"),
        ("SELECT id FROM sales.orders", Refusal.UNKNOWN_TABLE, "sales.orders"),
        ("SELECT 1 AS one", Refusal.UNKNOWN_TABLE, "at least one table"),
        ("SELECT phone FROM raw.sales.orders", Refusal.UNKNOWN_COLUMN, "phone"),
        ("SELECT id FROM raw.sales.orders WHERE colour = 'red'", Refusal.UNKNOWN_COLUMN, "colour"),
        ("SELECT o.nope FROM raw.sales.orders o", Refusal.UNKNOWN_COLUMN, "nope"),
        ("SELECT id FROM raw.sales.orders WHERE region = current_recipient(region)",
         Refusal.RECIPIENT_ARGUMENT, "current_recipient"),
        ("SELECT id FROM raw.sales.orders WHERE region = current_recipient('a', 'b')",
         Refusal.RECIPIENT_ARGUMENT, "current_recipient"),
        ("SELECT id FROM raw.sales.orders WHERE region = current_recipient(1)",
         Refusal.RECIPIENT_ARGUMENT, "current_recipient"),
        ("SELECT id FROM raw.sales.orders WHERE region = current_recipient()",
         Refusal.RECIPIENT_ARGUMENT, "current_recipient"),
        ("SELECT id FROM raw.sales.orders WHERE region = current_recipient(concat('re', 'gion'))",
         Refusal.RECIPIENT_ARGUMENT, "current_recipient"),
        ("SELECT " + "(" * 3000 + "id" + ")" * 3000 + " AS x FROM raw.sales.orders",
         Refusal.SYNTAX, "nested too deeply"),
        ("SELECT id" + " + id" * 3000 + " AS x FROM raw.sales.orders", Refusal.ENGINE,
         "depth"),
        ("SELECT upper(email) FROM raw.sales.orders", Refusal.OUTPUT, "upper(email)"),
        ("SELECT id, email AS id FROM raw.sales.orders", Refusal.OUTPUT, "id"),
        ("SELECT id, email AS ID FROM raw.sales.orders", Refusal.OUTPUT, "id"),
        ("SELECT * FROM raw.sales.orders o JOIN raw.sales.customers c ON o.id = c.id",
         Refusal.OUTPUT, "distinct names: id"),
        ("SELECT id + email AS x FROM raw.sales.orders", Refusal.ENGINE, "cannot run this view"),
    ],
)  # fmt: skip
def test_refusals_name_the_offending_part(sql: str, reason: Refusal, named: str) -> None:
    with pytest.raises(ViewDefinitionError) as refused:
        define_view(sql, schema_of)
    assert refused.value.reason is reason
    assert named.lower() in refused.value.message.lower()


def test_the_schema_callback_is_asked_for_three_part_names_only() -> None:
    asked: list[str] = []

    def recording(name: str) -> pa.Schema | None:
        asked.append(name)
        return TABLES.get(name)

    define_view("SELECT o.id FROM raw.sales.orders o JOIN raw.sales.customers c ON o.id = c.id",
                recording)  # fmt: skip
    assert asked == ["raw.sales.orders", "raw.sales.customers"]
    with pytest.raises(ViewDefinitionError):
        define_view("SELECT id FROM orders", recording)
    assert asked == ["raw.sales.orders", "raw.sales.customers"]


FUNCTIONS = pa.schema(
    [("s", pa.string()), ("n", pa.int64()), ("x", pa.float64()), ("d", pa.date32()),
     ("t", pa.timestamp("us", tz="UTC"))]
)  # fmt: skip


@pytest.mark.parametrize(
    "expression",
    [
        "upper(s)", "lower(s)", "length(s)", "trim(s)", "substring(s, 1, 2)", "concat(s, s)",
        "concat_ws('-', s, s)", "regexp_replace(s, 'a', 'b')", "regexp_extract(s, 'a', 0)",
        "s rlike 'a'", "replace(s, 'a', 'b')", "translate(s, 'a', 'b')", "left(s, 1)",
        "right(s, 1)", "lpad(s, 3, 'x')", "rpad(s, 3, 'x')", "initcap(s)", "instr(s, 'a')",
        "reverse(s)", "repeat(s, 2)", "hex(s)", "sha2(s, 256)",
        "sha1(s)", "sha(s)", "md5(s)", "CASE WHEN n > 1 THEN s END", "if(n > 1, s, 'x')",
        "coalesce(s, 'x')", "nvl(s, 'x')", "nullif(s, 'x')", "CAST(n AS STRING)",
        "try_cast(s AS INT)", "year(d)", "month(d)", "day(d)", "hour(t)", "minute(t)",
        "second(t)", "dayofweek(d)", "dayofmonth(d)", "dayofyear(d)", "weekofyear(d)",
        "quarter(d)", "date_add(d, 1)", "date_sub(d, 1)", "datediff(d, d)",
        "add_months(d, 1)", "months_between(d, d)", "last_day(d)", "date_trunc('MONTH', t)",
        "to_date(s)", "to_timestamp(s)", "date_format(d, 'yyyy-MM')",
        "from_unixtime(n)", "extract(YEAR FROM d)", "n + 1", "n - 1",
        "n * 2", "n / 2", "n % 2", "n div 2", "abs(n)", "round(x, 1)", "floor(x)", "ceil(x)",
        "pow(x, 2)", "sqrt(x)", "sign(x)", "greatest(n, 1)", "least(n, 1)",
        "n BETWEEN 1 AND 2", "s IN ('a', 'b')", "s LIKE 'a%'", "NOT (s IS NULL OR n <> 1)",
        "n > 1 AND s = 'a'", "EXISTS (SELECT 1 AS one FROM raw.f.t)",
        "current_recipient('k')",
    ],
)  # fmt: skip
def test_every_function_the_page_lists_is_accepted(expression: str) -> None:
    view = define_view(
        f"SELECT {expression} AS out FROM raw.f.t",
        lambda name: FUNCTIONS if name == "raw.f.t" else None,
    )
    assert view.output_schema.names == ["out"]


def test_aggregates_and_star_except_are_accepted() -> None:
    view = define_view(
        "SELECT count(*) AS c, sum(amount) AS s, avg(amount) AS a, min(id) AS lo, "
        "max(id) AS hi FROM raw.sales.orders",
        schema_of,
    )
    assert view.output_schema.names == ["c", "s", "a", "lo", "hi"]
    view = define_view("SELECT * EXCEPT (email) FROM raw.sales.orders", schema_of)
    assert view.output_schema.names == ["id", "region", "amount", "placed"]


def test_table_names_compare_case_insensitively() -> None:
    view = define_view(
        "SELECT o.id FROM RAW.Sales.Orders o JOIN raw.sales.orders p ON o.id = p.id "
        "WHERE o.Region = current_recipient('Region')",
        schema_of,
    )
    assert view.sources == ("raw.sales.orders",)
    assert view.recipient_keys == {"Region"}  # a property key is compared as written
    with pytest.raises(ViewDefinitionError, match=r"RAW\.Sales\.Missing"):
        define_view("SELECT id FROM RAW.Sales.Missing", schema_of)
