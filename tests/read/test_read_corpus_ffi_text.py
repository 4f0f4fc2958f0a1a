"""Tables whose expected result is the kernel FFI ``read_table`` text dump: the values
column by column (the header with its upstream path and the schema tree are skipped)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from test_read_corpus_expected import read_table

from corpus import corpus_table

FFI_TABLES = ["drs__table-with-dv-small", "krs__with-short-dv"]
"""The third ffi-text table, krs__table-with-geo, does not read (see the summary)."""


def parse_dump(path: Path) -> dict[str, list[str]]:
    """Column name -> value texts, from ``name:  [`` ... ``]`` blocks."""
    columns: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in path.read_text(encoding="utf-8").splitlines():
        if current is None and line.endswith(":  ["):
            current = columns.setdefault(line[: -len(":  [")], [])
        elif current is not None and line.strip() == "]":
            current = None
        elif current is not None:
            current.append(line.strip().rstrip(","))
    return columns


def value_text(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S.%fZ")
    if isinstance(value, float):
        return repr(value)
    return str(value)


@pytest.mark.parametrize("name", FFI_TABLES)
def test_values_equal_ffi_dump(name: str) -> None:
    table = corpus_table(name)
    assert table.expected_path is not None
    expected = parse_dump(table.expected_path / "ffi-read-table.expected.txt")
    got = read_table(table)
    assert sorted(expected) == sorted(got.column_names)
    for column, texts in expected.items():
        assert sorted(value_text(v) for v in got.column(column).to_pylist()) == sorted(texts)
