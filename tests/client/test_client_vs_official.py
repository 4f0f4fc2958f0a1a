"""deltaport's loaders give the same rows as the official ``delta-sharing`` client (1.4.2,
run in its own venv) reading the same tables from the same server, in both formats."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import deltaport.client as dc
from emulators import official_client_python  # noqa: F401

READ_SCRIPT = """
import json, sys
import delta_sharing
cases = json.loads(sys.argv[1])
out = []
for url, kwargs in cases:
    df = delta_sharing.load_as_pandas(url, **kwargs)
    df = df.astype(object).where(df.notna(), None)
    out.append([list(df.columns), [[str(v) if v is not None else None for v in row]
                                   for row in df.values.tolist()]])
print(json.dumps(out))
"""

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
    cases = [(f"{profile}#share1.default.{table}", kwargs) for table, kwargs in CASES]
    result = subprocess.run(
        [str(official_client_python), "-c", READ_SCRIPT, json.dumps(cases)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return list(json.loads(result.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("index", range(len(CASES)), ids=[f"{t}-{k}" for t, k in CASES])
def test_same_rows_as_the_official_client(official_results, profile, index):
    table, kwargs = CASES[index]
    ours = dc.load_as_pandas(f"{profile}#share1.default.{table}", **kwargs)
    columns, rows = official_results[index]
    our_columns, our_rows = _rows(ours)
    assert our_columns == columns
    if "limit" in kwargs:
        assert len(our_rows) == len(rows) == kwargs["limit"]
        return
    assert our_rows == sorted(rows, key=repr)


CHANGES_SCRIPT = """
import json, sys
import delta_sharing
df = delta_sharing.load_table_changes_as_pandas(sys.argv[1], starting_version=0)
df = df.drop(columns=["_commit_timestamp"]).astype(object)
df = df.where(df.notna(), None)
print(json.dumps([list(df.columns), [[str(v) if v is not None else None for v in row]
                                     for row in df.values.tolist()]]))
"""


def test_same_changes_as_the_official_client(official_client_python, profile):  # noqa: F811
    target = f"{profile}#share1.cdf.cdf"
    result = subprocess.run(
        [str(official_client_python), "-c", CHANGES_SCRIPT, target],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    columns, rows = json.loads(result.stdout.strip().splitlines()[-1])
    ours = dc.load_table_changes_as_pandas(target, starting_version=0)
    our_columns, our_rows = _rows(ours.drop(columns=["_commit_timestamp"]))
    assert our_columns == columns
    assert our_rows == sorted(rows, key=repr)
