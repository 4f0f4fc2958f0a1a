"""The README's provider quick start, run from its own text: its first shell block (sample
tables, secrets, configuration, profile, then ``deltaport serve``) in a temporary directory,
on a free port instead of 8090, and its second (a read with deltaport's client) against it."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

import httpx
from deltalake import DeltaTable

from sharing_server import free_port
from waiting import wait_until

ROOT = Path(__file__).resolve().parents[1]


def _section_blocks() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start: provider", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.*?)```", section, flags=re.DOTALL)


def _wait_until_served(server: subprocess.Popen[bytes], profile: Path, log: Path) -> None:
    def served() -> bool:
        assert server.poll() is None, log.read_text()
        answer = json.loads(profile.read_text())
        shares = httpx.get(
            answer["endpoint"] + "/shares",
            headers={"Authorization": f"Bearer {answer['bearerToken']}"},
            timeout=2,
        )
        return shares.status_code == 200

    not_yet = (OSError, ValueError, httpx.HTTPError)
    wait_until(served, 120, "the quick start's server", 0.2, ignore=not_yet, details=log.read_text)


def test_the_provider_quick_start_runs_as_written(tmp_path: Path) -> None:
    assert shutil.which("uv"), "the quick start runs uv"
    serve, read = _section_blocks()[:2]
    assert "8090" in serve and "deltaport serve" in serve and "deltaport cat" in read
    port = str(free_port())
    serve = serve.replace("8090", port)
    env = {k: v for k, v in os.environ.items() if not k.startswith("UV_") or k == "UV_CACHE_DIR"}
    # `uv run` from the temporary directory finds this clone's project and environment as is
    env |= {"UV_PROJECT": str(ROOT), "UV_NO_SYNC": "1", "UV_OFFLINE": "1", "PWD": str(tmp_path)}
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            ["bash", "-euc", serve],
            cwd=tmp_path,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        _wait_until_served(server, tmp_path / "quickstart" / "profile.share", log)
        shown = subprocess.run(
            ["bash", "-euc", read],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        os.killpg(server.pid, signal.SIGINT)
        server.wait(30)
    assert shown.returncode == 0, shown.stderr
    expected = DeltaTable(str(tmp_path / "quickstart" / "tables" / "orders")).to_pyarrow_table()
    lines = shown.stdout.splitlines()
    assert lines[0].split() == expected.column_names, shown.stdout
    assert len(lines) == 1 + min(5, expected.num_rows), shown.stdout
    first_ids = {str(i) for i in expected.column("order_id").to_pylist()}
    assert all(line.split()[0] in first_ids for line in lines[1:]), shown.stdout
    assert "signingKey is not set" not in log.read_text()
