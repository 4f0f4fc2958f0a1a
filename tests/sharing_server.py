"""Real deltaport server processes on 127.0.0.1, and the tables they serve in tests.

Shared by the server, client and Spark tests; ``tests/server/conftest.py`` re-exports the
fixtures.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa
import pytest
import yaml
from deltalake import write_deltalake

from corpus import corpus_table
from waiting import WaitTimeout, wait_until

TOKEN = "test-token-4f1c9e"
EPOCH_2024 = datetime(2024, 1, 1, tzinfo=UTC).timestamp()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class RunningServer:
    process: subprocess.Popen[bytes]
    base: str  # scheme://host:port
    endpoint: str
    log_path: Path

    @property
    def url(self) -> str:
        return self.base + self.endpoint

    def client(self, token: str | None = TOKEN, **kwargs: Any) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30, **kwargs)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def start_server(
    config: dict[str, Any], tmp: Path, scheme: str = "http", catalog: str | None = None
) -> RunningServer:
    """Start ``python -m deltaport.server`` (with ``catalog``: ``deltaport serve --catalog``)
    and wait until it answers."""
    tmp.mkdir(parents=True, exist_ok=True)
    config_path = tmp / "server.yaml"
    config_path.write_text(yaml.safe_dump(config))
    port = free_port()
    log_path = tmp / "server.log"
    log = log_path.open("wb")
    env = {**os.environ, "DELTAPORT_TEST_TOKEN": TOKEN}
    command = [sys.executable, "-m", "deltaport.server", "--config", str(config_path)]
    if catalog is not None:
        deltaport = str(Path(sys.executable).parent / "deltaport")
        command = [deltaport, "serve", "--config", str(config_path), "--catalog", catalog]
    process = subprocess.Popen(
        [*command, "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    endpoint = config.get("endpoint", "/delta-sharing")
    server = RunningServer(process, f"{scheme}://127.0.0.1:{port}", endpoint, log_path)

    def started() -> httpx.Response:
        if process.poll() is not None:
            raise RuntimeError(f"server exited early:\n{server.log()}")
        return httpx.get(server.url + "/openapi.json", timeout=1, verify=False)

    try:
        wait_until(started, 180, "the server to start", ignore=(httpx.HTTPError,))
    except WaitTimeout:
        stop_server(server)
        raise RuntimeError(f"server did not start:\n{server.log()}") from None
    return server


def stop_server(server: RunningServer) -> None:
    server.process.terminate()
    try:
        server.process.wait(10)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait(10)


def set_commit_times(table: Path, hours_after_2024: dict[int, float]) -> None:
    """Give commit files known modification times (the commit timestamps without ICT)."""
    for version, hours in hours_after_2024.items():
        stamp = EPOCH_2024 + hours * 3600
        os.utime(table / "_delta_log" / f"{version:020d}.json", (stamp, stamp))


def write_partitioned_table(root: Path) -> Path:
    """Three versions, partitioned by ``region``; commit v at 2024-01-01 + v hours."""
    for version, region in enumerate(["eu", "us", "asia"]):
        data = pa.table(
            {
                "id": pa.array([version * 10 + i for i in range(5)], pa.int64()),
                "region": pa.array([region] * 5),
                "value": pa.array([float(version * 10 + i) for i in range(5)]),
            }
        )
        write_deltalake(str(root), data, mode="append", partition_by=["region"])
    set_commit_times(root, {0: 0, 1: 1, 2: 2})
    return root


def write_many_files_table(root: Path, n_files: int) -> Path:
    """A log of one commit adding ``n_files`` files (the files themselves do not exist)."""
    log = root / "_delta_log"
    log.mkdir(parents=True)
    schema = {
        "type": "struct",
        "fields": [{"name": "id", "type": "long", "nullable": True, "metadata": {}}],
    }
    lines = [
        {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
        {
            "metaData": {
                "id": "many-files",
                "format": {"provider": "parquet", "options": {}},
                "schemaString": json.dumps(schema),
                "partitionColumns": [],
                "configuration": {},
                "createdTime": 0,
            }
        },
    ]
    for i in range(n_files):
        stats = {"numRecords": 10, "minValues": {"id": i * 10}, "maxValues": {"id": i * 10 + 9}}
        lines.append(
            {
                "add": {
                    "path": f"part-{i:06d}-0a1b2c3d-4e5f-6789-abcd-ef0123456789.snappy.parquet",
                    "partitionValues": {},
                    "size": 1000 + i,
                    "modificationTime": 1_700_000_000_000,
                    "dataChange": True,
                    "stats": json.dumps(stats),
                }
            }
        )
    (log / f"{0:020d}.json").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return root


def table_entry(name: str, location: Path | str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "location": str(location), **extra}


@pytest.fixture(scope="session")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tables")
    return {
        "parted": write_partitioned_table(root / "parted"),
        "many": write_many_files_table(root / "many", 3000),
        "basic": corpus_table("dat__basic_append").path,
        "dv": corpus_table("drs__table-with-dv-small").path,
        "cm": corpus_table("drs__table_with_column_mapping").path,
    }


@pytest.fixture(scope="session")
def server_config(tables: dict[str, Path]) -> dict[str, Any]:
    return {
        "version": 1,
        "authorization": {"bearerToken": "${DELTAPORT_TEST_TOKEN}"},
        "signingKey": "a-fixed-key-for-tests",
        "shares": [
            {
                "name": "Sales",
                "id": "00000000-0000-0000-0000-00000000000a",
                "comment": "sales data",
                "schemas": [
                    {
                        "name": "Default",
                        "tables": [
                            table_entry("parted", tables["parted"], historyShared=True, id="t-p"),
                            table_entry("basic", tables["basic"], properties={"k": "v"}),
                            table_entry("dv", tables["dv"]),
                            table_entry("cm", tables["cm"]),
                            table_entry("many", tables["many"]),
                        ],
                    },
                    {"name": "other", "tables": [table_entry("again", tables["basic"])]},
                ],
            },
            {"name": "empty_share", "schemas": []},
            {"name": "third", "displayName": "Third share", "schemas": []},
        ],
    }


@pytest.fixture(scope="session")
def server(
    server_config: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningServer]:
    running = start_server(server_config, tmp_path_factory.mktemp("server"))
    yield running
    stop_server(running)


@pytest.fixture
def client(server: RunningServer) -> Iterator[httpx.Client]:
    with server.client() as c:
        yield c


def ndjson(response: httpx.Response) -> list[dict[str, Any]]:
    return [json.loads(line) for line in response.text.splitlines() if line]
