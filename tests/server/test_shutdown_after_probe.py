"""SIGTERM after a hostile request sequence: the server still ends within its grace period.

The sequence is the probe's (issue 30, item 15): deeply nested predicate hints (400), a
25 MB body (413), ``/query`` and ``/changes`` on a table whose newest commit is corrupt,
``/query`` on a table whose commit adds ``../../../../etc/passwd``; then one client stays
stuck mid-body while the server is asked to stop.
"""

from __future__ import annotations

import json
import signal
import socket
import time
from pathlib import Path

import httpx

from history_tables import changes, history_config, query, write_log_only_table
from sharing_server import TOKEN, start_server

TABLE = "/shares/hist/schemas/s/tables"
GRACE_SECONDS = 1


def _write_escaping_table(path: Path) -> Path:
    """A table whose only commit adds a file at ``../../../../etc/passwd``."""
    write_log_only_table(path, 1, outside=None, cdf=False)
    commit = path / "_delta_log" / f"{0:020d}.json"
    lines = commit.read_text().splitlines()
    lines[-1] = json.dumps(
        {
            "add": {
                "path": "../../../../etc/passwd",
                "partitionValues": {},
                "size": 100,
                "modificationTime": 0,
                "dataChange": True,
            }
        }
    )
    commit.write_text("\n".join(lines) + "\n")
    return path


def _write_corrupt_newest(path: Path) -> Path:
    write_log_only_table(path, 3, outside=None, cdf=True)
    (path / "_delta_log" / f"{2:020d}.json").write_text('{"add": {"path": "x.parquet", \n')
    return path


def _deep_hint(depth: int) -> str:
    text = json.dumps({"op": "column", "name": "id", "valueType": "long"})
    for _ in range(depth):
        text = '{"op":"not","children":[' + text + "]}"
    return text


def _write_big_file_table(path: Path) -> Path:
    """A table of one 64 MiB local file (the file endpoint streams it)."""
    write_log_only_table(path, 1, outside=None, cdf=False)
    with (path / "part-000000.parquet").open("wb") as f:
        f.truncate(64 * 1024 * 1024)
    return path


def _stall_a_download(client: httpx.Client) -> socket.socket:
    """A download of the big file whose client reads a little and then stops reading."""
    lines = [json.loads(line) for line in query(client, "big", {}).text.splitlines()]
    url = httpx.URL(next(line["file"]["url"] for line in lines if "file" in line))
    assert url.host is not None and url.port is not None
    stalled = socket.create_connection((url.host, url.port))
    stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    target = url.raw_path.decode()
    stalled.sendall(f"GET {target} HTTP/1.1\r\nHost: {url.host}\r\n\r\n".encode())
    assert stalled.recv(1024).startswith(b"HTTP/1.1 200")
    return stalled


def _hostile_sequence(client: httpx.Client) -> None:
    for _ in range(3):
        response = query(client, "many", {"jsonPredicateHints": _deep_hint(5000)})
        assert response.status_code == 400, response.text[:300]
    big = b'{"predicateHints": ["' + b"x" * (25 * 1024 * 1024) + b'"]}'
    response = client.post(f"{TABLE}/many/query", content=big)
    assert response.status_code == 413
    assert query(client, "corrupt", {}).status_code == 500
    assert changes(client, "corrupt", startingVersion=1).status_code == 500
    response = query(client, "escaping", {})
    assert response.status_code >= 400 or "passwd" not in response.text


def _stick_mid_body(base: str, endpoint: str) -> socket.socket:
    host, port = base.removeprefix("http://").split(":")
    stuck = socket.create_connection((host, int(port)))
    stuck.sendall(
        f"POST {endpoint}{TABLE}/many/query HTTP/1.1\r\n"
        f"Host: {host}\r\nAuthorization: Bearer {TOKEN}\r\n"
        "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{".encode()
    )
    return stuck


def test_sigterm_after_the_hostile_sequence_ends_within_the_grace_period(
    tmp_path: Path,
) -> None:
    tables = {
        "many": write_log_only_table(tmp_path / "many", 50, outside=None, cdf=False),
        "corrupt": _write_corrupt_newest(tmp_path / "corrupt"),
        "escaping": _write_escaping_table(tmp_path / "escaping"),
        "big": _write_big_file_table(tmp_path / "big"),
    }
    config = history_config(tables) | {"shutdownGraceSeconds": GRACE_SECONDS}
    running = start_server(config, tmp_path / "server")
    try:
        with (
            running.client() as client,
            _stall_a_download(client),
            _stick_mid_body(running.base, running.endpoint),
        ):
            _hostile_sequence(client)
            time.sleep(0.5)
            started = time.monotonic()
            running.process.send_signal(signal.SIGTERM)
            code = running.process.wait(timeout=120)
            took = time.monotonic() - started
        assert code in (0, -signal.SIGTERM)
        assert "graceful shutdown exceeded" in running.log()
        assert took < GRACE_SECONDS + 8, took
        # nothing was left for the last-resort exit (listeners.py) to end
        assert "after the grace period" not in running.log()
    finally:
        if running.process.poll() is None:
            running.process.kill()
            running.process.wait()
