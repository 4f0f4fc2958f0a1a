"""Corpus tables read equal to deltalake (delta-rs), where deltalake reads them correctly.

``to_pyarrow_table()`` is used where the manifest says it reads the table (``yes``);
tables it reads wrongly (column mapping ignored, ``yes-but-wrong``) or refuses (deletion
vectors, v2 checkpoints, column-mapping features) are compared with the DataFusion SQL
read instead, which handles them.
"""

from __future__ import annotations

import datetime as dt

import deltalake
import pyarrow as pa
import pytest
from read_compare import first_difference, same_rows
from test_read_corpus_expected import read_table

from corpus import CorpusTable, corpus_table, corpus_tables
from deltaport.delta.table import DeltaTable
from deltaport.read import scan_snapshot

DELTALAKE_WRONG = {
    "drs__table_with_edge_timestamps": "deltalake overflows INT96 9999-12-30 to 1816-03-28",
}


def _how(table: CorpusTable) -> str | None:
    if table.negative or table.data_missing or table.name in DELTALAKE_WRONG:
        return None
    if table.deltalake_reads == "yes":
        return "pyarrow"
    if table.deltalake_sql_reads == "yes":
        return "sql"
    return None


CASES = [(t.name, how) for t in corpus_tables() if (how := _how(t)) is not None]


def deltalake_read(table: CorpusTable, how: str) -> pa.Table:
    dl = deltalake.DeltaTable(str(table.path))
    if how == "pyarrow":
        return pa.table(dl.to_pyarrow_table())
    result = deltalake.QueryBuilder().register("t", dl).execute("select * from t")
    return pa.table(result.read_all())


@pytest.mark.parametrize(("name", "how"), CASES, ids=[f"{n}-{h}" for n, h in CASES])
def test_reads_like_deltalake(name: str, how: str) -> None:
    table = corpus_table(name)
    expected = deltalake_read(table, how)
    got = read_table(table)
    assert sorted(got.column_names) == sorted(expected.column_names)
    columns = got.column_names
    assert same_rows(expected, got, columns), first_difference(expected, got, columns)


def test_column_mapping_tables_deltalake_reads_wrongly_are_compared_by_sql() -> None:
    wrong = {t.name for t in corpus_tables() if t.deltalake_reads.startswith("yes-but-wrong")}
    compared = {name for name, how in CASES if how == "sql"}
    assert wrong and wrong <= compared


def test_edge_timestamps_beyond_nanosecond_range() -> None:
    got = read_table(corpus_table("drs__table_with_edge_timestamps"))
    values = set(got.column(got.column_names[0]).to_pylist())
    assert dt.datetime(9999, 12, 30, tzinfo=dt.UTC) in values


def _counts_by_version(table: CorpusTable) -> dict[int, int]:
    """deltalake's row count per version from the manifest (SQL path first: it applies
    deletion vectors), versions it could not read left out."""
    spec = table.row.get("deltalake_sql_rows_by_version") or table.deltalake_rows_by_version
    counts = {}
    for part in filter(None, spec.split(";")):
        version, count = part.split(":")
        if count.isdigit():
            counts[int(version)] = int(count)
    return counts


VERSIONED = [
    t.name
    for t in corpus_tables()
    if not t.negative and not t.data_missing and _counts_by_version(t)
]


@pytest.mark.parametrize("name", VERSIONED)
def test_row_counts_of_every_version_match_deltalake(name: str) -> None:
    table = corpus_table(name)
    delta = DeltaTable(str(table.path))
    for version, count in _counts_by_version(table).items():
        snapshot = delta.snapshot(version)
        rows = sum(b.num_rows for b in scan_snapshot(snapshot, delta.storage, columns=[]))
        assert rows == count, f"version {version}"
