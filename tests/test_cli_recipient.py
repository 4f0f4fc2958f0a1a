"""``deltaport demo`` and the recipient commands ``shares``, ``tables``, ``cat`` and
``download``, run as a user runs them: the installed ``deltaport`` script in subprocesses,
against the demo server it starts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable

from sharing_server import free_port
from waiting import wait_until

DELTAPORT = str(Path(sys.executable).parent / "deltaport")


def deltaport(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([DELTAPORT, *args], capture_output=True, text=True, timeout=120)


class Demo:
    def __init__(self, root: Path, process: subprocess.Popen[bytes], output: Path) -> None:
        self.root = root
        self.process = process
        self.output = output
        self.profile = root / "profile.share"
        self.orders = f"{self.profile}#demo.sales.orders"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Demo]:
    root = tmp_path_factory.mktemp("demo") / "data"
    output = root.parent / "demo.out"
    command = [DELTAPORT, "demo", "--dir", str(root), "--port", str(free_port())]
    with output.open("wb") as out:  # unbuffered, as on a terminal
        environ = {**os.environ, "PYTHONUNBUFFERED": "1"}
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=environ)
    running = Demo(root, process, output)
    try:

        def serving() -> bool:
            assert process.poll() is None, output.read_text()
            if not running.profile.exists():
                return False
            profile = json.loads(running.profile.read_text())
            headers = {"Authorization": f"Bearer {profile['bearerToken']}"}
            return httpx.get(f"{profile['endpoint']}/shares", headers=headers).is_success

        wait_until(serving, 60, "the demo server to start", ignore=(httpx.HTTPError,))
        yield running
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)  # Ctrl-C, as its banner says
            process.wait(timeout=30)
    assert process.returncode == 0, output.read_text()


def test_demo_banner(demo: Demo) -> None:
    banner = demo.output.read_text().splitlines()
    assert banner[1] == f"Profile file: {demo.profile}"
    assert f"deltaport cat '{demo.orders}'" in banner[4]
    assert banner[5].startswith("Serving share 'demo' on http://127.0.0.1:")


def test_shares_and_tables(demo: Demo) -> None:
    shares = deltaport("shares", str(demo.profile))
    assert (shares.returncode, shares.stdout, shares.stderr) == (0, "demo\n", "")
    tables = deltaport("tables", str(demo.profile))
    assert tables.returncode == 0, tables.stderr
    assert sorted(tables.stdout.split()) == ["demo.sales.customers", "demo.sales.orders"]
    assert deltaport("tables", str(demo.profile), "demo").stdout == tables.stdout


def test_cat_prints_a_table_of_rows(demo: Demo) -> None:
    result = deltaport("cat", demo.orders, "--limit", "2", "--version", "0")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split()[:2] == ["order_id", "customer"]
    assert len(lines) == 3


def test_download_writes_the_table(demo: Demo, tmp_path: Path) -> None:
    out = tmp_path / "orders.parquet"
    result = deltaport("download", demo.orders, "-o", str(out))
    assert result.returncode == 0, result.stderr
    expected = DeltaTable(str(demo.root / "tables" / "orders")).to_pyarrow_table()
    assert result.stdout == f"wrote {expected.num_rows} rows to {out}\n"
    got = pq.read_table(out)
    key = [("order_id", "ascending")]
    assert got.select(expected.column_names).sort_by(key).to_pylist() == (
        expected.sort_by(key).to_pylist()
    )


def test_errors_are_one_line_and_a_failing_exit_code(demo: Demo) -> None:
    missing = deltaport("cat", f"{demo.profile}#demo.sales.nothing")
    assert missing.returncode == 1 and missing.stdout == ""
    assert missing.stderr.startswith("deltaport: error: ") and missing.stderr.count("\n") == 1
    assert "404" in missing.stderr and "RESOURCE_DOES_NOT_EXIST" in missing.stderr
    usage = deltaport("cat", demo.orders, "--limit", "-1")
    assert usage.returncode == 2 and "--limit" in usage.stderr
