"""The ``deltaport table ...`` commands, run as a user runs them (a subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pyarrow.parquet as pq
import pytest

from corpus import corpus_table
from deltaport.demo.samples import write_sample_tables
from sharing_server import free_port
from waiting import wait_until


def deltaport(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "deltaport.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_sample_tables(tmp_path_factory.mktemp("samples"))


def test_show_json_reports_version_schema_and_counts(samples: dict[str, Path]) -> None:
    result = deltaport("table", "show", str(samples["orders"]), "--json")
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["version"] == 3
    assert info["partition_columns"] == ["country"]
    assert [f["name"] for f in info["schema"]["fields"]] == [
        "order_id",
        "customer",
        "amount",
        "ordered_at",
        "country",
    ]
    assert info["num_records"] == 6
    assert info["num_files"] == 5
    assert info["protocol"]["minWriterVersion"] == 4


def test_show_text_at_version(samples: dict[str, Path]) -> None:
    result = deltaport("table", "show", str(samples["orders"]), "--version", "1")
    assert result.returncode == 0, result.stderr
    assert "version:    1 (2026-01-06T09:00:00.000+00:00)" in result.stdout
    assert "rows:       7" in result.stdout
    assert "amount: decimal(10,2)" in result.stdout


def test_history_newest_first(samples: dict[str, Path]) -> None:
    result = deltaport("table", "history", str(samples["orders"]), "--json")
    assert result.returncode == 0, result.stderr
    entries = json.loads(result.stdout)
    assert [e["version"] for e in entries] == [3, 2, 1, 0]
    assert [e["operation"] for e in entries] == ["UPDATE", "DELETE", "WRITE", "CREATE TABLE"]
    assert entries[-1]["timestamp"] == "2026-01-05T09:00:00.000+00:00"


def test_read_by_timestamp_to_parquet(samples: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "orders.parquet"
    result = deltaport(
        "table",
        "read",
        str(samples["orders"]),
        "--timestamp",
        "2026-01-06T10:00:00Z",
        "--columns",
        "order_id,country",
        "-o",
        str(out),
    )
    assert result.returncode == 0, result.stderr
    table = pq.read_table(out)
    assert table.column_names == ["order_id", "country"]
    assert sorted(table.column("order_id").to_pylist()) == [1, 2, 3, 4, 5, 6, 7]


def test_read_preview_with_limit(samples: dict[str, Path]) -> None:
    result = deltaport("table", "read", str(samples["customers"]), "--limit", "2")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("(2 rows)")


def test_changes_lists_the_change_data_feed(samples: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "changes.parquet"
    result = deltaport("table", "changes", str(samples["orders"]), "--from", "2", "-o", str(out))
    assert result.returncode == 0, result.stderr
    rows = sorted(
        (r["_commit_version"], r["_change_type"], r["order_id"], str(r["amount"]))
        for r in pq.read_table(out).to_pylist()
    )
    assert rows == [
        (2, "delete", 2, "75.00"),
        (3, "update_postimage", 3, "300.99"),
        (3, "update_preimage", 3, "310.99"),
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["table", "show", "/nonexistent/table"], "no Delta table"),
        (
            ["table", "show", str(corpus_table("golden__deltalog-invalid-protocol-version").path)],
            "reader protocol version",
        ),
        (["table", "show", "ftp://host/table"], "unsupported storage scheme"),
        (["table", "read", "/tmp", "--version", "-1"], "must not be negative"),
        (["table", "read", "/tmp", "--timestamp", "yesterday"], "invalid timestamp"),
    ],
)
def test_errors_are_one_clear_line(args: list[str], message: str) -> None:
    result = deltaport(*args)
    assert result.returncode != 0
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_a_second_demo_leaves_the_running_one_alone(tmp_path: Path) -> None:
    """Run while a demo serves, ``deltaport demo`` refuses its port and its directory
    before writing anything, and the running demo keeps serving its profile."""
    served, port = tmp_path / "demo-data", free_port()
    log = (tmp_path / "demo.log").open("wb")
    first = subprocess.Popen(
        [sys.executable, "-m", "deltaport.cli", "demo", "--dir", str(served), "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        profile = json.loads(_wait_for_demo(first, served / "profile.share", tmp_path / "demo.log"))
        before = _tree(served)
        elsewhere = tmp_path / "elsewhere"
        for args, message in (
            (["--dir", str(served)], f"port {port} on 127.0.0.1 is in use"),
            (["--dir", str(elsewhere)], f"port {port} on 127.0.0.1 is in use"),
            (["--dir", str(served), "--port", str(free_port())], "is served by a running demo"),
        ):
            port_args = [] if "--port" in args else ["--port", str(port)]
            second = deltaport("demo", *args, *port_args)
            assert second.returncode == 1, second.stderr
            assert message in second.stderr and "Traceback" not in second.stderr
            assert "Serving" not in second.stdout
            assert _tree(served) == before
            assert not elsewhere.exists()
        headers = {"Authorization": f"Bearer {profile['bearerToken']}"}
        shares = httpx.get(profile["endpoint"] + "/shares", headers=headers, timeout=30)
        assert shares.status_code == 200
        assert [s["name"] for s in shares.json()["items"]] == ["demo"]
    finally:
        first.terminate()
        first.wait(30)
        log.close()


def _wait_for_demo(process: subprocess.Popen[bytes], profile: Path, log: Path) -> str:

    def started() -> str | None:
        assert process.poll() is None, log.read_text()
        if not profile.exists():
            return None
        text = profile.read_text()
        httpx.get(json.loads(text)["endpoint"] + "/shares", timeout=1)
        return text

    return wait_until(started, 180, "the demo to start", 0.2, ignore=(httpx.HTTPError,))
