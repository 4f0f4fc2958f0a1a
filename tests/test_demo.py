"""``deltaport demo`` as a person runs it: a real process serving its sample tables."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import yaml

from sharing_server import free_port

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
            deadline = time.monotonic() + 120
            while True:
                assert process.poll() is None, log.read_text()
                profile = directory / "profile.share"
                try:
                    token = json.loads(profile.read_text())["bearerToken"]
                    answer = httpx.get(
                        f"http://127.0.0.1:{port}/delta-sharing/shares",
                        headers={"Authorization": f"Bearer {token}"},
                        timeout=2,
                    )
                    if answer.status_code == 200:
                        break
                except (OSError, ValueError, httpx.HTTPError):
                    pass
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.2)
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
