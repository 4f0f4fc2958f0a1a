"""Views materialized over corpus tables (deletion vectors, column mapping, partitions):
the materialized Delta table, read by deltalake, holds the rows DuckDB gives for the same
SELECT written by hand with the binding's values as literals, over the source as an
independent reader reads it (deltalake, else DuckDB's ``delta_scan`` on delta-kernel-rs)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import deltalake
import duckdb
import pyarrow as pa
import pytest
from duckdb_extensions import import_extension

from corpus import corpus_table
from deltaport.delta import DeltaTable
from deltaport.read import table_arrow_schema
from deltaport.views import DuckDBEngine, Shape, bind, define_view
from deltaport.views.materialize import materialize

# (case, {view source -> corpus table}, view SQL, reference SQL, recipient properties)
CASES: list[tuple[str, dict[str, str], str, str, dict[str, str]]] = [
    (
        "partitioned-filter-and-conditional-mask",
        {"raw.corpus.t": "dat__basic_partitioned"},
        "SELECT letter, number, CASE WHEN current_recipient('tier') = 'gold' THEN a_float "
        "ELSE NULL END AS a_float FROM raw.corpus.t "
        "WHERE letter = current_recipient('letter') OR letter IS NULL",
        "SELECT letter, number, CASE WHEN 'silver' = 'gold' THEN a_float ELSE NULL END "
        "AS a_float FROM t WHERE letter = 'a' OR letter IS NULL",
        {"tier": "silver", "letter": "a"},
    ),
    (
        "partitioned-special-characters",
        {"raw.corpus.t": "dat__multi_partitioned"},
        "SELECT letter, date, number * 2 AS doubled FROM raw.corpus.t "
        "WHERE number > CAST(current_recipient('above') AS BIGINT)",
        "SELECT letter, date, number * 2 AS doubled FROM t WHERE number > CAST('0' AS BIGINT)",
        {"above": "0"},
    ),
    (
        "deletion-vectors-column-mapping-hash",
        {"raw.corpus.t": "golden__dv-with-columnmapping"},
        "SELECT part, col1, sha2(col2, 256) AS col2 FROM raw.corpus.t "
        "WHERE part = CAST(current_recipient('part') AS INT)",
        "SELECT part, col1, sha256(col2) AS col2 FROM t WHERE part = CAST('1' AS INT)",
        {"part": "1"},
    ),
    (
        "deletion-vectors-checkpoint-concat",
        {"raw.corpus.t": "golden__dv-partitioned-with-checkpoint"},
        "SELECT *, concat(col2, '!') AS shout, CASE WHEN current_recipient('tag') = 'eu' "
        "THEN upper(col2) ELSE col2 END AS tagged FROM raw.corpus.t WHERE col1 > 35",
        "SELECT *, concat(col2, '!') AS shout, CASE WHEN 'eu' = 'eu' THEN upper(col2) "
        "ELSE col2 END AS tagged FROM t WHERE col1 > 35",
        {"tag": "eu"},
    ),
    (
        "deletion-vectors-arithmetic",
        {"raw.corpus.t": "kdefaults__basic-dv-no-checkpoint"},
        "SELECT id, id * 10 AS tens FROM raw.corpus.t WHERE id % 2 = 0",
        "SELECT id, id * 10 AS tens FROM t WHERE id % 2 = 0",
        {},
    ),
    (
        "deletion-vector-key-cases-missing-property",
        {"raw.corpus.t": "golden__log-replay-dv-key-cases"},
        "SELECT id FROM raw.corpus.t WHERE id < CAST(current_recipient('below') AS BIGINT) "
        "OR current_recipient('below') IS NULL",
        "SELECT id FROM t WHERE id < CAST(NULL AS BIGINT) OR NULL IS NULL",
        {},
    ),
    (
        "column-mapping-names-with-spaces",
        {"raw.corpus.t": "drs__table_with_column_mapping"},
        "SELECT `Company Very Short`, md5(`Super Name`) AS masked FROM raw.corpus.t",
        'SELECT "Company Very Short", md5("Super Name") AS masked FROM t',
        {},
    ),
    (
        "column-mapping-partition-values-coalesce",
        {"raw.corpus.t": "kdefaults__data-reader-partition-values-column-mapping-name"},
        "SELECT as_int, as_date, coalesce(as_string, current_recipient('d')) AS s "
        "FROM raw.corpus.t",
        "SELECT as_int, as_date, coalesce(as_string, 'none') AS s FROM t",
        {"d": "none"},
    ),
    (
        "column-mapping-nested-types",
        {"raw.corpus.t": "golden__table-with-columnmapping-mode-name"},
        "SELECT * FROM raw.corpus.t",
        "SELECT * FROM t",
        {},
    ),
    (
        "primitives-aggregate",
        {"raw.corpus.t": "golden__data-reader-primitives"},
        "SELECT as_boolean, count(*) AS n, max(as_long) AS top FROM raw.corpus.t "
        "WHERE as_string <> current_recipient('hide') GROUP BY as_boolean",
        "SELECT as_boolean, count(*) AS n, max(as_long) AS top FROM t "
        "WHERE as_string <> '3' GROUP BY as_boolean",
        {"hide": "3"},
    ),
    (
        "join-of-two-deletion-vector-tables",
        {
            "raw.corpus.t": "kdefaults__basic-dv-no-checkpoint",
            "raw.corpus.u": "golden__log-replay-dv-key-cases",
        },
        "SELECT t.id, u.id * 100 AS other FROM raw.corpus.t AS t JOIN raw.corpus.u AS u "
        "ON t.id = u.id",
        "SELECT t.id, u.id * 100 AS other FROM t AS t JOIN u AS u ON t.id = u.id",
        {},
    ),
]


@cache
def _delta_scan() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    import_extension("delta", con=con)
    con.execute("LOAD delta")
    return con


def _independent(name: str) -> pa.Table:
    table = corpus_table(name)
    if table.deltalake_reads == "yes":
        return deltalake.DeltaTable(str(table.path)).to_pyarrow_table()
    result = _delta_scan().execute(f"SELECT * FROM delta_scan('{table.path}')").arrow()
    return result.read_all() if isinstance(result, pa.RecordBatchReader) else result


def _reference(sql: str, sources: dict[str, pa.Table]) -> pa.Table:
    con = duckdb.connect()
    for relation, table in sources.items():
        con.register(relation, table)
    result = con.execute(sql).arrow()
    return result.read_all() if isinstance(result, pa.RecordBatchReader) else result


def _rows(table: pa.Table) -> list[str]:
    return sorted(repr(row) for row in table.to_pylist())


def _as(reference: pa.Table, schema: pa.Schema) -> pa.Table:
    """``reference`` in ``schema``'s types where the two spell one value differently (a
    delta_scan ``int32`` partition column the table declares ``int``)."""
    columns: list[Any] = []
    for field, column in zip(schema, reference.columns, strict=True):
        columns.append(column.cast(field.type) if column.type != field.type else column)
    return pa.table(columns, names=schema.names)


def _check_statistics(table: deltalake.DeltaTable, got: pa.Table) -> None:
    """The statistics deltalake parses from the log bound the rows it reads."""
    actions = pa.table(table.get_add_actions(flatten=True))
    assert sum(actions.column("num_records").to_pylist()) == got.num_rows
    for field in got.schema:
        if f"min.{field.name}" not in actions.column_names or pa.types.is_timestamp(field.type):
            continue
        values = [v for v in got.column(field.name).to_pylist() if v is not None]
        lows = [v for v in actions.column(f"min.{field.name}").to_pylist() if v is not None]
        highs = [v for v in actions.column(f"max.{field.name}").to_pylist() if v is not None]
        if not lows:  # no bounds written (booleans, NaN, only nulls)
            continue
        assert values, field.name
        assert (min(lows), max(highs)) == (min(values), max(values)), field.name
        nulls = actions.column(f"null_count.{field.name}").to_pylist()
        assert sum(nulls) == got.column(field.name).null_count, field.name


@pytest.mark.parametrize(
    ("case", "tables", "view_sql", "reference_sql", "properties"),
    CASES,
    ids=[case[0] for case in CASES],
)
def test_a_materialized_view_read_by_deltalake_equals_duckdb_over_the_source(
    tmp_path: Path,
    case: str,
    tables: dict[str, str],
    view_sql: str,
    reference_sql: str,
    properties: dict[str, str],
) -> None:
    sources = {name: DeltaTable(str(corpus_table(t).path)) for name, t in tables.items()}
    schemas = {name: table_arrow_schema(s.snapshot().metadata) for name, s in sources.items()}
    view = define_view(view_sql, schemas.get)
    binding = bind(view, properties)
    done = materialize(view, binding, sources, str(tmp_path), engine=DuckDBEngine())
    assert done.version == 0
    assert done.source_version == sources[view.sources[0]].latest_version()

    got = deltalake.DeltaTable(done.location).to_pyarrow_table()
    reference = _reference(
        reference_sql, {name.split(".")[-1]: _independent(t) for name, t in tables.items()}
    )
    assert got.column_names == reference.column_names
    assert _rows(got) == _rows(_as(reference, got.schema))
    _check_statistics(deltalake.DeltaTable(done.location), got)
    files = deltalake.DeltaTable(done.location).file_uris()
    if view.shape is Shape.ROW_LOCAL:
        assert len(files) == sources[view.sources[0]].snapshot().num_files
    else:
        assert len(files) == 1


def test_the_cases_cover_the_features() -> None:
    tags: set[str] = set()
    for _, tables, *_ in CASES:
        for name in tables.values():
            tags |= corpus_table(name).tags
    assert {"deletion-vectors", "column-mapping-name", "partitioned", "checkpoint"} <= tags
