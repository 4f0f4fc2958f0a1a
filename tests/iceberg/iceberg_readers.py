"""Iceberg readers in tests: pyiceberg and DuckDB (with its extension wheels from PyPI,
loaded without network access); what they must read, from readers independent of
deltaport (the corpus's expected results, deltalake, DuckDB's ``delta_scan`` on
delta-kernel-rs); and a comparison that forgives only representation (an ``int8`` read as
``int32``, a zone spelt ``Etc/UTC``, a column name's case), never a value."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from functools import cache
from typing import Any

import deltalake
import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
from duckdb_extensions import import_extension

from corpus import CorpusTable

SPARK_SESSION_ZONE_TABLE = "golden__data-reader-partition-values"
"""Its expected result holds timestamp partition values in Spark's session zone, where the
protocol (and every reader here) reads them as UTC (tests/read pins it)."""


def duckdb_connection() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    for extension in ("avro", "httpfs", "iceberg"):
        import_extension(extension, con=con)
    con.execute("LOAD iceberg")
    return con


@cache
def delta_connection() -> duckdb.DuckDBPyConnection:
    """One DuckDB connection with the delta extension (loading it costs more than most
    reads), for ``delta_scan``."""
    con = duckdb.connect()
    import_extension("delta", con=con)
    con.execute("LOAD delta")
    return con


def duckdb_arrow(con: duckdb.DuckDBPyConnection, sql: str) -> pa.Table:
    result = con.execute(sql).arrow()
    return result.read_all() if isinstance(result, pa.RecordBatchReader) else result


def independent_read(table: CorpusTable, version: int | None = None) -> tuple[str, pa.Table] | None:
    """What ``table`` holds at ``version`` (None: the latest), and who says so: the
    corpus's expected result where it has one, else deltalake where it reads the table,
    else (at the latest version) DuckDB's ``delta_scan``; None when none of them can."""
    expected = table.expected_path
    if expected is not None and table.name != SPARK_SESSION_ZONE_TABLE:
        if table.expected_format == "kernel-golden" and version is None:
            return "expected result", pq.read_table(expected)
        folder = expected / ("latest" if version is None else f"v{version}")
        if table.expected_format == "dat" and (folder / "table_content.parquet").exists():
            return "expected result", pq.read_table(folder / "table_content.parquet")
    if table.deltalake_reads == "yes":
        return "deltalake", deltalake.DeltaTable(
            str(table.path), version=version
        ).to_pyarrow_table()
    if version is None:
        try:
            got = duckdb_arrow(delta_connection(), f"select * from delta_scan('{table.path}')")
        except (duckdb.Error, pa.ArrowException):
            return None
        return "delta_scan", got
    return None


def deltalake_read(
    location: str, options: Mapping[str, str] | None = None, version: int | None = None
) -> pa.Table:
    """The table at ``location`` (its ``version``, else the latest) as deltalake reads it:
    what the Iceberg readers must match where the corpus has no expected result."""
    table = deltalake.DeltaTable(location, version=version, storage_options=dict(options or {}))
    return table.to_pyarrow_table()


def as_expected(got: pa.Table, expected: pa.Table) -> pa.Table:
    """``got`` with ``expected``'s columns in its order, each cast to its type where the
    two differ only in representation."""
    columns = []
    by_lower = {name.lower(): name for name in got.column_names}
    for field in expected.schema:
        column = got.column(by_lower[field.name.lower()])
        if column.type != field.type:
            with contextlib.suppress(
                pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError
            ):
                column = column.cast(field.type)
        columns.append(column)
    return pa.table(columns, names=expected.column_names)


def rows(table: pa.Table) -> list[str]:
    return sorted(repr(_plain(r)) for r in table.to_pylist())


def _plain(value: Any) -> Any:
    """Values with zone objects dropped (a zone is part of the type, compared apart)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if hasattr(value, "tzinfo") and getattr(value, "tzinfo", None) is not None:
        return value.replace(tzinfo=None).isoformat() + "Z"
    return value


def first_difference(got: pa.Table, expected: pa.Table) -> str | None:
    """None when ``got`` holds ``expected``'s rows (any order), else what differs."""
    if got.num_rows != expected.num_rows:
        return f"{got.num_rows} rows read, {expected.num_rows} expected"
    missing = {c.lower() for c in expected.column_names} - {c.lower() for c in got.column_names}
    if missing:
        return f"columns missing: {sorted(missing)}"
    got = as_expected(got, expected)
    a, b = rows(got), rows(expected)
    for x, y in zip(a, b, strict=True):
        if x != y:
            return f"read {x[:300]}\n expected {y[:300]}"
    return None
