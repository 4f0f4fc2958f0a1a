"""Properties of the hints of ``/query`` as the server reads them
(:func:`deltaport.server.tables.selection.select_files`, over
:mod:`deltaport.read.file_selection`): any ``predicateHints`` and ``jsonPredicateHints``
are either used, skipped or refused with a 400 (``InvalidParameterError``), never another
exception; and a hint never drops a file holding a row it matches (random small tables
of files with stats and partition values from ``tests/predicate_tables.py``, random
predicates sent as JSON and as SQL)."""

from __future__ import annotations

import datetime as dt
import json
import random
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deltaport.delta.model import Metadata
from deltaport.protocol.errors import InvalidParameterError
from deltaport.protocol.predicates import (
    And,
    Column,
    Comparison,
    Expr,
    IsNull,
    Literal,
    Not,
    Or,
    PredicateError,
    evaluate_rows,
    parse_json_predicate,
    parse_sql_predicate,
    predicate_to_json,
)
from deltaport.server.tables.selection import HintSettings, select_files
from predicate_tables import (
    COLUMN_TYPES,
    PARTITIONS,
    files_table,
    random_file,
    random_predicate,
    row_owners,
    rows_table,
)

SETTINGS = HintSettings(max_hints=3, max_length=200, max_depth=6)
_FIELDS = [
    {"name": name, "type": kind, "nullable": True, "metadata": {}}
    for name, kind in COLUMN_TYPES.items()
    if "." not in name
]
_STRUCT = {
    "type": "struct",
    "fields": [{"name": "x", "type": "long", "nullable": True, "metadata": {}}],
}
METADATA = Metadata(
    id="hints",
    schema_string=json.dumps(
        {
            "type": "struct",
            "fields": [*_FIELDS, {"name": "st", "type": _STRUCT, "nullable": True, "metadata": {}}],
        }
    ),
    partition_columns=PARTITIONS,
)
_OPS = {
    "equal": "=",
    "lessThan": "<",
    "lessThanOrEqual": "<=",
    "greaterThan": ">",
    "greaterThanOrEqual": ">=",
}


def sql_of(expr: Expr) -> str:
    """``expr`` as a SQL hint (its columns untyped: SQL hints carry no types)."""
    match expr:
        case Column(name=name):
            return ".".join(f"`{part}`" for part in name.split("."))
        case Literal(value=bool() as value):
            return "true" if value else "false"
        case Literal(value=int() | Decimal() as value):
            return str(value)
        case Literal(value=dt.datetime() as value):
            return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
        case Literal(value=dt.date() as value):
            return f"DATE '{value.isoformat()}'"
        case Literal(value=value):
            return "'" + str(value).replace("'", "''") + "'"
        case Comparison(op=op, left=left, right=right):
            return f"({sql_of(left)} {_OPS[op]} {sql_of(right)})"
        case IsNull(child=child):
            return f"({sql_of(child)} IS NULL)"
        case Not(child=child):
            return f"(NOT {sql_of(child)})"
        case And(children=children):
            return "(" + " AND ".join(sql_of(c) for c in children) + ")"
        case Or(children=children):
            return "(" + " OR ".join(sql_of(c) for c in children) + ")"
    raise AssertionError(expr)


def _json_of(predicate: Expr) -> str | None:
    """``predicate`` as a JSON hint; None when a column of it has no type (SQL-only)."""
    try:
        return json.dumps(predicate_to_json(predicate))
    except PredicateError:
        return None


@settings(max_examples=100, deadline=None)
@given(st.randoms(use_true_random=False), st.booleans())
def test_a_hint_never_drops_a_file_holding_a_matching_row(rng: random.Random, as_sql: bool) -> None:
    files = [random_file(rng) for _ in range(6)]
    table = files_table(rng, files)
    rows = rows_table(files)
    owners = row_owners(files)
    predicate = random_predicate(rng)
    json_hint = _json_of(predicate)
    if as_sql or json_hint is None:
        hint = sql_of(predicate)
        sent = parse_sql_predicate(hint)  # what the server evaluates
        kept = select_files(table, METADATA, [hint], None, None, HintSettings())
    else:
        sent = predicate
        kept = select_files(table, METADATA, None, json_hint, None, HintSettings())
    try:
        matches = np.asarray(evaluate_rows(sent, rows), dtype=bool)
    except Exception:  # no rows oracle for this predicate: nothing to check
        return
    needed = {f"part-{i}.parquet" for i in set(owners[matches].tolist())}
    assert needed <= set(kept.column("path").to_pylist()), (sql_of(predicate), files)


HINT_TEXT = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["i > 1", "`s` = 'a'", "NOT NOT NOT NOT NOT NOT NOT (i = 1)", "x" * 201]),
)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(st.none(), st.lists(HINT_TEXT, max_size=5)),
    st.one_of(st.none(), HINT_TEXT, st.just(json.dumps({"op": "not", "children": [{}] * 1}))),
    st.one_of(st.none(), st.integers(-2, 10)),
    st.randoms(use_true_random=False),
)
def test_any_hints_are_used_skipped_or_refused_with_a_400(
    sql: list[str] | None, json_hint: str | None, limit: int | None, rng: random.Random
) -> None:
    table = files_table(rng, [random_file(rng) for _ in range(3)])
    try:
        kept = select_files(table, METADATA, sql, json_hint, limit, SETTINGS)
    except InvalidParameterError:
        return
    assert set(kept.column("path").to_pylist()) <= set(table.column("path").to_pylist())


def test_the_hints_read_back_and_drop_files() -> None:
    """The property above is not empty: its hints parse, and they do drop files."""
    rng = random.Random(7)
    typed = dropped = 0
    for _ in range(50):
        table = files_table(rng, [random_file(rng) for _ in range(6)])
        predicate = random_predicate(rng)
        hint = sql_of(predicate)
        assert parse_sql_predicate(hint) is not None
        kept = select_files(table, METADATA, [hint], None, None, HintSettings())
        dropped += table.num_rows - kept.num_rows
        json_hint = _json_of(predicate)
        if json_hint is not None:
            assert parse_json_predicate(json_hint) == predicate
            typed += 1
    assert typed >= 5
    assert dropped >= 60
    with pytest.raises(InvalidParameterError):
        select_files(pa.table({}), METADATA, ["x" * 201], None, None, SETTINGS)
