"""deltaport's loaders give the same rows as the official ``delta-sharing`` client (1.4.2,
run in its own venv) reading the same tables from the same server, in both formats."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import deltaport.client as dc
from emulators import official_call, official_client_python, official_client_results  # noqa: F401

CASES: list[tuple[str, dict[str, Any]]] = [
    ("parted", {}),
    ("parted", {"version": 1}),
    ("parted", {"use_delta_format": True}),
    ("small_files", {}),
    ("basic", {}),
    ("dv", {}),
    ("cm", {}),
    ("small_files", {"limit": 120}),
]


def _rows(frame: pd.DataFrame) -> tuple[list[str], list[list[str | None]]]:
    frame = frame.astype(object).where(frame.notna(), None)
    rows = [[_text(v) for v in row] for row in frame.values.tolist()]
    return list(frame.columns), sorted(rows, key=repr)


def _text(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return str(value)


@pytest.fixture(scope="module")
def official_results(official_client_python: Path, profile: Path) -> list[Any]:  # noqa: F811
    calls = [
        official_call("load_as_pandas", f"{profile}#share1.default.{table}", **kwargs)
        for table, kwargs in CASES
    ]
    return official_client_results(official_client_python, calls)


def _official_rows(out: dict[str, Any]) -> tuple[list[str], list[list[str | None]]]:
    assert "error" not in out, out["error"]
    rows = [[_text(r[c]) for c in out["columns"]] for r in out["rows"]]
    return out["columns"], sorted(rows, key=repr)


@pytest.mark.parametrize("index", range(len(CASES)), ids=[f"{t}-{k}" for t, k in CASES])
def test_same_rows_as_the_official_client(official_results, profile, index):
    table, kwargs = CASES[index]
    ours = dc.load_as_pandas(f"{profile}#share1.default.{table}", **kwargs)
    columns, rows = _official_rows(official_results[index])
    our_columns, our_rows = _rows(ours)
    assert our_columns == columns
    if "limit" in kwargs:
        assert len(our_rows) == len(rows) == kwargs["limit"]
        return
    assert our_rows == rows


def test_same_changes_as_the_official_client(official_client_python, profile):  # noqa: F811
    target = f"{profile}#share1.cdf.cdf"
    call = official_call("load_table_changes_as_pandas", target, starting_version=0)
    (out,) = official_client_results(official_client_python, [call])
    for row in out["rows"]:
        del row["_commit_timestamp"]
    out["columns"].remove("_commit_timestamp")
    columns, rows = _official_rows(out)
    ours = dc.load_table_changes_as_pandas(target, starting_version=0)
    our_columns, our_rows = _rows(ours.drop(columns=["_commit_timestamp"]))
    assert our_columns == columns
    assert our_rows == rows
