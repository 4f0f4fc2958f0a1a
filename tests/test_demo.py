"""``deltaport demo`` as a person runs it: a real process serving its sample tables."""

from __future__ import annotations

import json
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
