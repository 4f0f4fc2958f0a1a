"""Every corpus table with an expected result reads equal to it (order-insensitive).

kernel-golden expected folders are Spark-written parquet parts of the latest snapshot; dat
cases have ``latest/`` and ``vN/`` folders with ``table_content.parquet``. The expected
files store timestamps as INT96 / ns without a zone and sometimes other decimal scales;
:mod:`read_compare` tolerates those representation differences only.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from read_compare import first_difference, same_rows

from corpus import CorpusTable, corpus_table, corpus_tables
from deltaport.delta.table import DeltaTable
from deltaport.read import scan_snapshot, table_arrow_schema

PARTITION_TIMESTAMP_TABLE = "golden__data-reader-partition-values"
"""Spark wrote this table's timestamp partition values in its session zone
(America/Los_Angeles, no zone suffix); the protocol and deltaport read them as UTC."""


def _cases() -> list[tuple[str, int | None, Path]]:
    cases: list[tuple[str, int | None, Path]] = []
    for t in corpus_tables():
        if t.expected_path is None or t.name == PARTITION_TIMESTAMP_TABLE:
            continue
        if t.expected_format == "kernel-golden":
            cases.append((t.name, None, t.expected_path))
        elif t.expected_format == "dat":
            for folder in sorted(t.expected_path.iterdir()):
                content = folder / "table_content.parquet"
                if content.exists():
                    version = None if folder.name == "latest" else int(folder.name[1:])
                    cases.append((t.name, version, content))
    return cases


def read_table(table: CorpusTable, version: int | None = None) -> pa.Table:
    delta = DeltaTable(str(table.path))
    snapshot = delta.snapshot(version)
    batches = scan_snapshot(snapshot, delta.storage)
    return pa.Table.from_batches(list(batches), schema=table_arrow_schema(snapshot.metadata))


def _lower_names(table: pa.Table) -> pa.Table:
    return table.rename_columns([c.lower() for c in table.column_names])


@pytest.mark.parametrize(
    ("name", "version", "expected_path"),
    _cases(),
    ids=lambda v: v if isinstance(v, str) else (str(v) if isinstance(v, int) else ""),
)
def test_reads_expected_result(name: str, version: int | None, expected_path: Path) -> None:
    expected = _lower_names(pq.read_table(expected_path))
    got = _lower_names(read_table(corpus_table(name), version))
    assert sorted(got.column_names) == sorted(expected.column_names)
    columns = sorted(got.column_names)
    # dat's expected files hold Delta timestamps as zone-free INT96 (Spark's writer)
    zone_free = name.startswith("dat__")
    assert same_rows(expected, got, columns, zone_free_expected=zone_free), first_difference(
        expected, got, columns, zone_free_expected=zone_free
    )


def test_expected_cases_cover_all_expected_tables() -> None:
    names = {name for name, _, _ in _cases()}
    with_expected = {
        t.name for t in corpus_tables() if t.expected_format in ("kernel-golden", "dat")
    }
    assert with_expected - names == {PARTITION_TIMESTAMP_TABLE}
    assert len(with_expected) == 82


def test_timestamp_partition_values_are_read_as_utc() -> None:
    table = corpus_table(PARTITION_TIMESTAMP_TABLE)
    assert table.expected_path is not None
    expected = pq.read_table(table.expected_path)
    got = read_table(table)
    others = sorted(c for c in got.column_names if c != "as_timestamp")
    assert same_rows(expected, got, others), first_difference(expected, got, others)
    stamps = got.column("as_timestamp").drop_null().to_pylist()
    assert {s.isoformat() for s in stamps} == {"2021-09-08T11:11:11+00:00"}
    spark_stamps = {s.isoformat() for s in expected.column("as_timestamp").drop_null().to_pylist()}
    assert spark_stamps == {"2021-09-08T18:11:11+00:00"}  # 11:11:11 in America/Los_Angeles
