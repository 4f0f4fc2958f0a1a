"""``deltaport demo`` as a person runs it: a real process serving its sample tables."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import yaml

from sharing_server import free_port
from waiting import wait_until

DELTAPORT = str(Path(sys.executable).parent / "deltaport")


def run_demo_once(directory: Path) -> str:
    """Start the demo, read one answer with its profile, stop it; its output."""
    port = free_port()
    log = directory.parent / f"demo-{port}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [DELTAPORT, "demo", "--dir", str(directory), "--port", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:

            def serving() -> bool:
                assert process.poll() is None, log.read_text()
                token = json.loads((directory / "profile.share").read_text())["bearerToken"]
                answer = httpx.get(
                    f"http://127.0.0.1:{port}/delta-sharing/shares",
                    headers={"Authorization": f"Bearer {token}"},
                    timeout=2,
                )
                return answer.status_code == 200

            wait_until(serving, 120, "the demo", 0.2, ignore=(OSError, ValueError, httpx.HTTPError))
        finally:
            process.send_signal(signal.SIGINT)
            process.wait(30)
    return log.read_text()


def test_the_demo_keeps_its_own_signing_key_and_warns_of_none(tmp_path: Path) -> None:
    directory = tmp_path / "demo-data"
    first = run_demo_once(directory)
    assert "signingKey" not in first, first
    key = yaml.safe_load((directory / "server.yaml").read_text())["signingKey"]
    assert len(key) >= 32
    assert key not in first
    second = run_demo_once(directory)
    assert "signingKey" not in second, second
    assert yaml.safe_load((directory / "server.yaml").read_text())["signingKey"] == key


def test_the_demo_script_installs_the_package_without_the_dev_group(tmp_path: Path) -> None:
    """``bash scripts/demo.sh`` on a fresh clone: it serves, and its environment holds the
    package's dependencies only (no pytest, pyspark, mkdocs, playwright or moto)."""
    root = Path(__file__).resolve().parents[1]
    clone = tmp_path / "clone"
    listed = subprocess.run(
        [
            "git",
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
            "pyproject.toml",
            "uv.lock",
            "README.md",
            "src",
            "scripts",
        ],
        cwd=root,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        (clone / name).parent.mkdir(parents=True, exist_ok=True)
        (clone / name).write_bytes((root / name).read_bytes())
    env = {k: v for k, v in os.environ.items() if not k.startswith("UV_") or k == "UV_CACHE_DIR"}
    env.pop("VIRTUAL_ENV", None)
    env["UV_OFFLINE"] = "1"  # from uv's cache: the test reaches no index
    port = free_port()
    demo = subprocess.Popen(
        ["bash", "scripts/demo.sh", "--port", str(port)],
        cwd=clone,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert demo.stdout is not None
        lines = []
        for line in demo.stdout:
            lines.append(line)
            if line.startswith("Serving share"):
                break
        assert lines and lines[-1].startswith("Serving share"), "".join(lines)
        assert any("uv run --no-dev deltaport cat" in line for line in lines), lines
    finally:
        demo.send_signal(signal.SIGINT)
        demo.wait(30)
    site = next((clone / ".venv" / "lib").glob("python3*/site-packages"))
    installed = {p.name.split("-")[0].lower() for p in site.glob("*.dist-info")}
    assert "deltaport" in installed
    assert not installed & {"pytest", "pyspark", "mkdocs", "playwright", "moto", "polars"}
    size = sum(p.stat().st_size for p in site.rglob("*") if p.is_file())
    assert size < 600 * 2**20, f"{size / 2**20:.0f} MiB"  # the dev group makes it 1.9 GB
