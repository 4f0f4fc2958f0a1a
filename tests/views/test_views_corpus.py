"""Views run by the embedded engine over corpus tables read by deltalake, against an
expected side computed with pyarrow.compute (filter, group by) and hashlib: never DuckDB,
which is the engine under test. A row-local view fed one piece of its source at a time
gives the rows of the whole."""

from __future__ import annotations

import hashlib
from collections import Counter

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from deltalake import DeltaTable

from corpus import corpus_table
from deltaport.views import DuckDBEngine, Shape, ViewDefinition, bind, define_view, run_view

TABLES = [
    "dat__all_primitive_types",
    "dat__basic_partitioned",
    "dat__multi_partitioned",
    "drs__cdf-table",
    "drs__delta-1.2.1-only-struct-stats",
    "drs__partition-type-primitives",
    "golden__data-reader-escaped-chars",
    "golden__data-reader-primitives",
    "golden__hive-deltatbl-column-names-case-insensitive",
    "golden__hive-deltatbl-map-types-correctly",
    "golden__parquet-all-types",
    "golden__basic-with-inserts-merge",
    "krs__mixed-nulls",
    "krs__parsed-stats",
]
SOURCE = "raw.corpus.t"


def _read(name: str) -> pa.Table:
    return DeltaTable(str(corpus_table(name).path)).to_pyarrow_table()


def _string_column(table: pa.Table) -> str:
    return next(f.name for f in table.schema if pa.types.is_string(f.type))


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _define(sql: str, table: pa.Table) -> ViewDefinition:
    return define_view(sql, lambda name: table.schema if name == SOURCE else None)


def _run(view: ViewDefinition, properties: dict[str, str], source: pa.Table) -> pa.Table:
    engine = DuckDBEngine(memory_limit="512MB")
    return run_view(engine, view, bind(view, properties), {SOURCE: source}).read_all()


def _rows(table: pa.Table) -> list[dict[str, object]]:
    return sorted(table.to_pylist(), key=repr)


def _most_common(column: pa.ChunkedArray) -> str:
    values = Counter(value for value in column.to_pylist() if value is not None)
    return str(values.most_common(1)[0][0])


def _filtered_and_masked(table: pa.Table, column: str, value: str) -> pa.Table:
    kept = table.filter(pc.equal(table[column], pa.scalar(value)))
    hashes = [hashlib.sha256(v.encode()).hexdigest() for v in kept[column].to_pylist()]
    return kept.append_column("view_hash", pa.array(hashes, pa.string())).append_column(
        "view_upper", pc.utf8_upper(kept[column])
    )


def _masking_view(table: pa.Table) -> tuple[ViewDefinition, str]:
    column = _string_column(table)
    sql = (
        f"SELECT *, sha2({_quoted(column)}, 256) AS view_hash, upper({_quoted(column)}) "
        f"AS view_upper FROM {SOURCE} WHERE {_quoted(column)} = current_recipient('k')"
    )
    return _define(sql, table), column


@pytest.mark.parametrize("name", TABLES)
def test_a_filtering_and_masking_view(name: str) -> None:
    table = _read(name)
    view, column = _masking_view(table)
    assert view.shape is Shape.ROW_LOCAL
    value = _most_common(table[column])
    got = _run(view, {"k": value}, table)
    want = _filtered_and_masked(table, column, value)
    assert got.column_names == want.column_names
    assert got.num_rows == want.num_rows > 0
    assert _rows(got) == _rows(want.cast(got.schema))
    assert got.schema == view.output_schema


@pytest.mark.parametrize("name", TABLES)
def test_a_recipient_without_the_property_gets_no_row(name: str) -> None:
    table = _read(name)
    view, _ = _masking_view(table)
    got = _run(view, {}, table)
    assert got.num_rows == 0
    assert got.schema == view.output_schema


@pytest.mark.parametrize("name", TABLES)
def test_a_row_local_view_fed_piece_by_piece_gives_the_rows_of_the_whole(name: str) -> None:
    table = _read(name)
    view, column = _masking_view(table)
    value = _most_common(table[column])
    pieces = [
        _run(view, {"k": value}, table.slice(start, 2)) for start in range(0, table.num_rows, 2)
    ]
    got = pa.concat_tables(pieces)
    want = _filtered_and_masked(table, column, value)
    assert _rows(got) == _rows(want.cast(got.schema))


@pytest.mark.parametrize("name", TABLES)
def test_an_aggregating_view_is_recomputed_whole(name: str) -> None:
    table = _read(name)
    column = _string_column(table)
    view = _define(
        f"SELECT {_quoted(column)} AS key, count(*) AS n FROM {SOURCE} GROUP BY {_quoted(column)}",
        table,
    )
    assert view.shape is Shape.WHOLE
    got = _run(view, {}, table)
    counted = table.group_by(column).aggregate([([], "count_all")])
    want = {row[column]: row["count_all"] for row in counted.to_pylist()}
    assert {row["key"]: row["n"] for row in got.to_pylist()} == want
