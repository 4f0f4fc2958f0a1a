"""Order-insensitive comparison of read results, and reference reads without a server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from deltaport.direct import read_change_batches, read_table_batches


def sorted_rows(table: pa.Table) -> list[tuple[Any, ...]]:
    columns = [table.column(name).to_pylist() for name in table.column_names]
    return sorted(zip(*columns, strict=True), key=repr) if columns else []


def assert_same_rows(got: pa.Table, expected: pa.Table) -> None:
    assert got.schema.names == expected.schema.names
    assert got.num_rows == expected.num_rows
    keys = [(name, "ascending") for name in got.schema.names]
    try:
        if got.sort_by(keys).equals(expected.sort_by(keys)):
            return
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
        pass  # nested columns cannot be sort keys: compare row by row
    assert sorted_rows(got) == sorted_rows(expected)


def direct_read(path: Path, version: int | None = None) -> pa.Table:
    """The table read straight from disk by deltaport's own reader."""
    schema, batches = read_table_batches(str(path), version=version)
    return pa.Table.from_batches(list(batches), schema=schema)


def direct_changes(path: Path, start: int, end: int | None = None) -> pa.Table:
    schema, batches = read_change_batches(str(path), start, end)
    return pa.Table.from_batches(list(batches), schema=schema)
