"""deltaport's drop-in functions return what the official ``delta-sharing`` client (1.4.2,
run in its own venv) returns for the same tables from the same server: the same columns in
the same order, the same dtypes and the same values, for snapshots and change data."""

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

SCRIPT = """
import json, sys
import delta_sharing
out = []
for kind, url, kwargs in json.loads(sys.argv[1]):
    load = getattr(delta_sharing, kind)
    df = load(url, **kwargs)
    dtypes = [str(t) for t in df.dtypes]
    df = df.astype(object).where(df.notna(), None)
    rows = [[repr(v) if v is not None else None for v in row] for row in df.values.tolist()]
    out.append([list(df.columns), dtypes, rows])
print(json.dumps(out))
"""

SNAPSHOTS: list[tuple[str, dict[str, Any]]] = [
    ("default.parted", {}),
    ("default.parted", {"version": 1}),
    ("default.parted", {"use_delta_format": True}),
    ("default.small_files", {}),
    ("default.basic", {}),
    ("default.dv", {}),
    ("default.cm", {}),
    ("default.small_files", {"limit": 120}),
    ("cdf.cdf", {}),
    ("cdf.cdf_dv", {"use_delta_format": True}),
    ("cdf.cdf_cm", {"use_delta_format": True}),
]
CHANGES: list[tuple[str, dict[str, Any]]] = [
    ("cdf.cdf", {"starting_version": 0}),
    ("cdf.cdf", {"starting_version": 1, "ending_version": 2}),
    ("cdf.cdf", {"starting_version": 0, "use_delta_format": True}),
    ("cdf.cdf_dv", {"starting_version": 0, "use_delta_format": True}),
    ("cdf.cdf_dv_pairs", {"starting_version": 0, "use_delta_format": True}),
    ("cdf.cdf_cm", {"starting_version": 2, "use_delta_format": True}),
]
CASES = [("load_as_pandas", t, k) for t, k in SNAPSHOTS] + [
    ("load_table_changes_as_pandas", t, k) for t, k in CHANGES
]


def _dtype(dtype: Any) -> str:
    """The name pandas 2 (the official client's venv) gives ``dtype``: pandas 3 converts
    Arrow strings to its ``str`` dtype where pandas 2 gives ``object``, in both clients."""
    return "object" if isinstance(dtype, pd.StringDtype) else str(dtype)


def _frame(frame: pd.DataFrame) -> tuple[list[str], list[str], list[list[str | None]]]:
    dtypes = [_dtype(t) for t in frame.dtypes]
    frame = frame.astype(object).where(frame.notna(), None)
    rows = [[_text(v) for v in row] for row in frame.values.tolist()]
    return list(frame.columns), dtypes, sorted(rows, key=repr)


def _text(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return repr(value)


@pytest.fixture(scope="module")
def official_results(official_client_python: Path, profile: Path) -> list[Any]:  # noqa: F811
    cases = [(kind, f"{profile}#share1.{table}", kwargs) for kind, table, kwargs in CASES]
    result = subprocess.run(
        [str(official_client_python), "-c", SCRIPT, json.dumps(cases)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return list(json.loads(result.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize("index", range(len(CASES)), ids=[f"{k}-{t}-{a}" for k, t, a in CASES])
def test_same_frame_as_the_official_client(official_results, profile, index):
    kind, table, kwargs = CASES[index]
    ours = getattr(dc, kind)(f"{profile}#share1.{table}", **kwargs)
    if kind == "load_table_changes_as_pandas" and kwargs.get("use_delta_format"):
        # the official client replays the feed through log files whose times it sets in
        # whole seconds: its commit timestamps lose their milliseconds (docs/reading.md)
        ours["_commit_timestamp"] = ours["_commit_timestamp"].dt.floor("s")
    columns, dtypes, rows = official_results[index]
    our_columns, our_dtypes, our_rows = _frame(ours)
    assert our_columns == columns
    assert our_dtypes == dtypes
    if "limit" in kwargs:
        assert len(our_rows) == len(rows) == kwargs["limit"]
        return
    assert our_rows == sorted(rows, key=repr)


def test_arrow_types_keep_the_commit_timestamp_a_timestamp(profile):
    target = f"{profile}#share1.cdf.cdf"
    official = dc.load_table_changes_as_pandas(target, starting_version=0)
    typed = dc.load_table_changes_as_pandas(target, starting_version=0, arrow_types=True)
    assert str(official["_commit_timestamp"].dtype) == "int64"
    assert str(typed["_commit_timestamp"].dtype) == "datetime64[us, UTC]"
    millis = typed["_commit_timestamp"].astype("int64") // 1000
    assert millis.tolist() == official["_commit_timestamp"].tolist()
    assert official["_commit_timestamp"].min() > 1_600_000_000_000  # milliseconds, not us
