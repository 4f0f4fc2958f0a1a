"""``deltaport serve`` checks before it says it serves: a port in use (the sharing or the admin
listener's) stops it at once with one line; a YAML table whose local location holds no Delta
table is named in a warning at start. Real processes."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
import yaml
from deltalake import write_deltalake

from sharing_server import free_port, start_server, stop_server, table_entry

DELTAPORT = str(Path(sys.executable).parent / "deltaport")
ADMIN_TOKEN = "an-admin-token-of-32-characters!"


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield int(holder.getsockname()[1])


def _serve(config: dict[str, object], tmp: Path, port: int) -> subprocess.CompletedProcess[str]:
    path = tmp / "server.yaml"
    path.write_text(yaml.safe_dump(config))
    return subprocess.run(
        [DELTAPORT, "serve", "--config", str(path), "--host", "127.0.0.1", "--port", str(port)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_taken_sharing_port_stops_serve_with_one_line(tmp_path: Path, taken_port: int) -> None:
    run = _serve({"version": 1}, tmp_path, taken_port)
    assert run.returncode == 1
    assert run.stdout == ""
    assert run.stderr == (
        f"deltaport: error: port {taken_port} on 127.0.0.1 is in use by another process: stop "
        "it, or choose another port with --port (or `port` in the configuration)\n"
    )


def test_a_taken_admin_port_stops_serve_with_one_line(tmp_path: Path, taken_port: int) -> None:
    config = {"version": 1, "admin": {"port": taken_port, "tokens": [ADMIN_TOKEN]}}
    run = _serve(config, tmp_path, free_port())
    assert run.returncode == 1
    assert run.stdout == ""
    assert run.stderr == (
        f"deltaport: error: the admin listener's port {taken_port} on 127.0.0.1 is in use by "
        "another process: stop it, or choose another with `admin.port` in the configuration\n"
    )


def test_a_missing_local_table_is_named_at_start(tmp_path: Path) -> None:
    present = tmp_path / "present"
    write_deltalake(str(present), pa.table({"id": [1, 2]}))
    empty = tmp_path / "empty"
    empty.mkdir()
    missing = tmp_path / "missing"
    tables = [table_entry("present", present), table_entry("gone", missing)]
    tables.append(table_entry("empty", empty))
    tables.append(table_entry("cloud", "s3://no-such-bucket/t"))  # not probed at start
    config = {
        "version": 1,
        "authorization": {"bearerToken": "t" * 24},
        "shares": [{"name": "lake", "schemas": [{"name": "default", "tables": tables}]}],
    }
    server = start_server(config, tmp_path / "run")
    try:
        log = server.log()
    finally:
        stop_server(server)
    warnings = [line for line in log.splitlines() if "recipients get 404" in line]
    assert len(warnings) == 2, log
    assert f"table lake.default.gone: its location {missing} does not exist" in warnings[0]
    assert f"table lake.default.empty: its location {empty} holds no _delta_log" in warnings[1]
    assert log.index(warnings[1]) < log.index("serving 1 share"), log
