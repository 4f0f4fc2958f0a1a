"""Memory of a server whose clients abandon their streams mid-way.

Builds a log-only table of 300,000 files (one JSON commit), starts
``python -m deltaport.server`` on it, reads the whole snapshot once (the snapshot and its
prepared pieces are then cached), and then, four times over, has 20 clients start the same
query at once, read one chunk each and hang up. The server's resident memory is printed
after each round. Memory the abandoned answers held must come back: the target is no
growth from the first round to the last beyond 10%, the allocator's own drift here.

Run: ``uv run python benchmarks/bench_abandoned_streams.py`` (about two minutes).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

N_FILES = 300_000
CLIENTS = 20
ROUNDS = 4
TOKEN = "bench-token"


def write_table(root: Path) -> None:
    log = root / "_delta_log"
    log.mkdir(parents=True)
    schema = {"type": "struct", "fields": [{"name": "id", "type": "long", "nullable": True}]}
    head = [
        {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
        {
            "metaData": {
                "id": "abandoned",
                "format": {"provider": "parquet", "options": {}},
                "schemaString": json.dumps(schema),
                "partitionColumns": [],
                "configuration": {},
                "createdTime": 0,
            }
        },
    ]
    with (log / f"{0:020d}.json").open("w") as out:
        for action in head:
            out.write(json.dumps(action) + "\n")
        for i in range(N_FILES):
            add = {
                "path": f"part-{i:07d}.parquet",
                "partitionValues": {},
                "size": 100,
                "modificationTime": 0,
                "dataChange": True,
            }
            out.write(json.dumps({"add": add}) + "\n")


def resident_mb(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split("VmRSS:")[1].split()[0]) // 1024


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="deltaport-bench-") as tmp:
        root = Path(tmp)
        write_table(root / "big")
        config = {
            "authorization": {"bearerToken": TOKEN},
            "shares": [
                {
                    "name": "s",
                    "schemas": [
                        {"name": "d", "tables": [{"name": "t", "location": str(root / "big")}]}
                    ],
                }
            ],
        }
        (root / "server.yaml").write_text(json.dumps(config))
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "deltaport.server",
                "--config",
                str(root / "server.yaml"),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            return _measure(
                server, f"http://127.0.0.1:{port}/delta-sharing/shares/s/schemas/d/tables/t"
            )
        finally:
            server.terminate()
            server.wait()


def _measure(server: subprocess.Popen[bytes], table: str) -> int:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    for _ in range(300):
        try:
            httpx.get(f"{table}/version", headers=headers)
            break
        except httpx.HTTPError:
            time.sleep(0.2)
    full = httpx.post(f"{table}/query", json={}, headers=headers, timeout=600)
    assert full.status_code == 200, full.text[:200]
    time.sleep(2)
    print(f"after one full answer: {resident_mb(server.pid)} MB")

    def abandon(started: threading.Barrier) -> None:
        with (
            httpx.Client(headers=headers, timeout=600) as client,
            client.stream("POST", f"{table}/query", json={}) as response,
        ):
            next(response.iter_bytes())
            started.wait()

    after = []
    for round_ in range(ROUNDS):
        started = threading.Barrier(CLIENTS + 1)
        clients = [threading.Thread(target=abandon, args=(started,)) for _ in range(CLIENTS)]
        for client in clients:
            client.start()
        started.wait()
        during = resident_mb(server.pid)
        for client in clients:
            client.join()
        time.sleep(5)
        after.append(resident_mb(server.pid))
        print(f"round {round_ + 1}: {during} MB with {CLIENTS} streams open, {after[-1]} MB after")
    growth = after[-1] / after[0] - 1
    verdict = "met" if growth <= 0.10 else "MISSED"
    print(f"growth from the first round to the last: {growth:+.0%} (target <= +10%: {verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
