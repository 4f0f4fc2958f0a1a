"""The embedded engine: its settings hold per run, its result streams in batches, it takes
tables and streams as sources, and it reads nothing but the sources it is handed."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

from deltaport.views import DuckDBEngine, Engine

NUMBERS = pa.table({"n": pa.array(range(1000), pa.int64())})


def test_the_result_streams_in_batches() -> None:
    engine: Engine = DuckDBEngine(batch_rows=100)
    reader = engine.run("SELECT n * 2 AS twice FROM numbers WHERE n % 2 = 0", {"numbers": NUMBERS})
    assert reader.schema == pa.schema([("twice", pa.int64())])
    batches = list(reader)
    assert len(batches) >= 5
    assert all(batch.num_rows <= 100 for batch in batches)
    rows = pa.Table.from_batches(batches)["twice"].to_pylist()
    assert sorted(rows) == [n * 2 for n in range(0, 1000, 2)]


def test_a_stream_is_a_source_too() -> None:
    stream = pa.RecordBatchReader.from_batches(NUMBERS.schema, NUMBERS.to_batches(max_chunksize=64))
    got = DuckDBEngine().run("SELECT sum(n) AS total FROM numbers", {"numbers": stream})
    assert got.read_all().to_pylist() == [{"total": sum(range(1000))}]


def test_each_run_has_its_memory_limit_and_threads() -> None:
    engine = DuckDBEngine(memory_limit="300MB", threads=2)
    got = engine.run(
        "SELECT current_setting('memory_limit') AS memory, current_setting('threads') AS threads "
        "FROM numbers LIMIT 1",
        {"numbers": NUMBERS},
    ).read_all()
    [row] = got.to_pylist()
    assert row["threads"] == 2
    assert row["memory"] == "286.1 MiB"  # 300 MB in DuckDB's binary units


def test_a_run_past_its_memory_limit_fails_instead_of_growing() -> None:
    engine = DuckDBEngine(memory_limit="32MB")
    with pytest.raises(duckdb.OutOfMemoryException):
        engine.run(
            "SELECT list(repeat('x', 100) || n::VARCHAR) AS everything "
            "FROM range(2000000) AS numbers(n)",
            {},
        ).read_all()


def test_runs_share_no_state() -> None:
    engine = DuckDBEngine()
    engine.run("SELECT 1 AS one FROM numbers", {"numbers": NUMBERS}).read_all()
    with pytest.raises(duckdb.CatalogException):
        engine.run("SELECT 1 AS one FROM numbers", {}).read_all()


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM '/etc/passwd'",
        "COPY (SELECT 1) TO '/tmp/deltaport-views-engine-escape.csv'",
        "INSTALL httpfs",
        "SET enable_external_access = true",
    ],
)
def test_the_engine_reads_only_its_sources(sql: str) -> None:
    with pytest.raises(duckdb.Error):
        DuckDBEngine().run(sql, {"numbers": NUMBERS}).read_all()
