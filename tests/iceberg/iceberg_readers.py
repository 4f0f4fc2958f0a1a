"""Iceberg readers in tests: pyiceberg and DuckDB (with its extension wheels from PyPI,
loaded without network access), and a comparison of what they read with deltaport's own
reader that forgives only representation (an ``int8`` read as ``int32``, a zone spelt
``Etc/UTC``), never a value."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

import duckdb
import pyarrow as pa
from duckdb_extensions import import_extension

from deltaport.delta import open_table
from deltaport.read import scan_snapshot, table_arrow_schema


def duckdb_connection() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    for extension in ("avro", "httpfs", "iceberg"):
        import_extension(extension, con=con)
    con.execute("LOAD iceberg")
    return con


def duckdb_arrow(con: duckdb.DuckDBPyConnection, sql: str) -> pa.Table:
    result = con.execute(sql).arrow()
    return result.read_all() if isinstance(result, pa.RecordBatchReader) else result


def deltaport_read(
    location: str, options: Mapping[str, str] | None = None, version: int | None = None
) -> pa.Table:
    """The table at ``location`` (its ``version``, else the latest) as deltaport's own
    reader reads it: what the Iceberg readers must match."""
    table = open_table(location, options)
    snapshot = table.snapshot(version)
    schema = table_arrow_schema(snapshot.metadata)
    return pa.Table.from_batches(list(scan_snapshot(snapshot, table.storage)), schema=schema)


def as_expected(got: pa.Table, expected: pa.Table) -> pa.Table:
    """``got`` with ``expected``'s columns in its order, each cast to its type where the
    two differ only in representation."""
    columns = []
    for field in expected.schema:
        column = got.column(field.name)
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
    missing = set(expected.column_names) - set(got.column_names)
    if missing:
        return f"columns missing: {sorted(missing)}"
    got = as_expected(got, expected)
    a, b = rows(got), rows(expected)
    for x, y in zip(a, b, strict=True):
        if x != y:
            return f"read {x[:300]}\n expected {y[:300]}"
    return None
