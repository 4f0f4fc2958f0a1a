"""The official Python client (delta-sharing 1.4.2, in its own venv: the shared
``official_client_python`` fixture) reads from our server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from deltalake import DeltaTable, QueryBuilder

from emulators import official_call, official_client_python, official_client_results  # noqa: F401
from sharing_server import TOKEN, RunningServer

# Every read the tests check, done in one client process (starting one is slow).
REQUESTS: dict[str, tuple[str, dict[str, Any]]] = {
    **{
        f"parted-{fmt}": ("parted", {"use_delta_format": fmt == "delta"})
        for fmt in ("parquet", "delta")
    },
    **{
        f"parted-v1-{fmt}": ("parted", {"version": 1, "use_delta_format": fmt == "delta"})
        for fmt in ("parquet", "delta")
    },
    **{
        f"basic-{fmt}": ("basic", {"use_delta_format": fmt == "delta"})
        for fmt in ("parquet", "delta")
    },
    **{
        f"basic-limit-{fmt}": ("basic", {"limit": 2, "use_delta_format": fmt == "delta"})
        for fmt in ("parquet", "delta")
    },
    "dv-delta": ("dv", {"use_delta_format": True}),
    "dv-auto": ("dv", {}),
    "basic-auto": ("basic", {}),
}


@pytest.fixture(scope="module")
def profile(server: RunningServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("profile") / "profile.share"
    profile = {"shareCredentialsVersion": 1, "endpoint": server.url, "bearerToken": TOKEN}
    path.write_text(json.dumps(profile))
    return path


@pytest.fixture(scope="module")
def reads(official_client_python: Path, profile: Path) -> dict[str, dict[str, Any]]:  # noqa: F811
    calls = [
        official_call("load_as_pandas", f"{profile}#sales.default.{table}", **options)
        for table, options in REQUESTS.values()
    ]
    answers = official_client_results(official_client_python, calls)
    return dict(zip(REQUESTS, answers, strict=True))


def load(reads: dict[str, dict[str, Any]], key: str) -> pd.DataFrame:
    answer = reads[key]
    assert "error" not in answer, answer["error"]
    return pd.DataFrame(answer["rows"])


def expected_rows(
    path: Path, columns: list[str], version: int | None = None
) -> list[dict[str, Any]]:
    table = DeltaTable(str(path), version=version)
    frame = table.to_pandas()[columns]
    return sorted(
        frame.to_dict("records"), key=lambda r: json.dumps(r, sort_keys=True, default=str)
    )


def expected_sql_rows(path: Path, columns: list[str]) -> list[dict[str, Any]]:
    """Through deltalake's SQL engine, which applies deletion vectors."""
    result = QueryBuilder().register("t", DeltaTable(str(path))).execute("select * from t")
    frame = pa.table(result.read_all()).to_pandas()[columns]
    return sorted(
        frame.to_dict("records"), key=lambda r: json.dumps(r, sort_keys=True, default=str)
    )


def rows(frame: pd.DataFrame, columns: list[str]) -> list[dict[str, Any]]:
    return sorted(
        frame[columns].to_dict("records"), key=lambda r: json.dumps(r, sort_keys=True, default=str)
    )


@pytest.mark.parametrize("fmt", ["parquet", "delta"])
def test_load_partitioned_table(
    reads: dict[str, dict[str, Any]], tables: dict[str, Path], fmt: str
) -> None:
    columns = ["id", "region", "value"]
    assert rows(load(reads, f"parted-{fmt}"), columns) == expected_rows(tables["parted"], columns)
    old = load(reads, f"parted-v1-{fmt}")
    assert rows(old, columns) == expected_rows(tables["parted"], columns, version=1)


@pytest.mark.parametrize("fmt", ["parquet", "delta"])
def test_load_basic_table_with_limit(
    reads: dict[str, dict[str, Any]], tables: dict[str, Path], fmt: str
) -> None:
    columns = ["letter", "number", "a_float"]
    assert rows(load(reads, f"basic-{fmt}"), columns) == expected_rows(tables["basic"], columns)
    assert len(load(reads, f"basic-limit-{fmt}")) == 2


def test_load_deletion_vector_table(
    reads: dict[str, dict[str, Any]], tables: dict[str, Path]
) -> None:
    frame = load(reads, "dv-delta")
    assert rows(frame, ["value"]) == expected_sql_rows(tables["dv"], ["value"])
    assert len(frame) == 8


def test_access_log_hides_url_signatures(
    reads: dict[str, dict[str, Any]], server: RunningServer
) -> None:
    file_requests = [line for line in server.log().splitlines() if "/files/" in line]
    assert file_requests
    assert all("sig=REDACTED" in line for line in file_requests)


def test_autoresolved_format(reads: dict[str, dict[str, Any]], tables: dict[str, Path]) -> None:
    """Without use_delta_format the client asks /metadata which format to use."""
    frame = load(reads, "dv-auto")
    assert rows(frame, ["value"]) == expected_sql_rows(tables["dv"], ["value"])
    columns = ["letter", "number", "a_float"]
    assert rows(load(reads, "basic-auto"), columns) == expected_rows(tables["basic"], columns)
