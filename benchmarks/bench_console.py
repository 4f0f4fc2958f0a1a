"""Console and admin API speed on a big table, against the sharing API in the same run.

A log-only table of 100,000 files and 10,000 commits (a checkpoint of 100,000 files, then
commits that each add one file and remove one), served by one ``deltaport.server``
process with the admin listener. Timed, warm (each URL asked once before): the table
page, the first page of its history, the first page of its files, and the diff page of
two branches of it (a copy with five more commits), each against ``GET .../metadata`` of
the same table on the sharing listener. The requests go round in turn, ``ROUNDS`` times,
so all see the same machine load; the figures are medians, the ratios medians over
medians (target: within 3x of ``/metadata``).

Run: ``uv run python benchmarks/bench_console.py`` (about a minute).
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import yaml
from checkpointed_log import CHECKPOINT_VERSION, write_checkpoint, write_commit

N_FILES = 100_000
N_COMMITS = 10_000
EXTRA_RIGHT = 5
ROUNDS = 15
TOKEN = "bench-token"
ADMIN_TOKEN = "bench-admin-token-0123456789"
METADATA = "/delta-sharing/shares/bench/schemas/default/tables/big/metadata"


def build(root: Path) -> tuple[Path, Path]:
    left = root / "left"
    log = left / "_delta_log"
    write_checkpoint(log, N_FILES, "bench-table")
    last = CHECKPOINT_VERSION + N_COMMITS - 1
    for version in range(CHECKPOINT_VERSION + 1, last + 1):
        write_commit(log, version, N_FILES, adds=1)
    right = root / "right"
    shutil.copytree(left, right)
    for version in range(last + 1, last + 1 + EXTRA_RIGHT):
        write_commit(right / "_delta_log", version, N_FILES, adds=1)
    return left, right


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120
    while True:
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError("the server did not start") from None
            time.sleep(0.1)


def timed(client: httpx.Client, url: str) -> float:
    start = time.perf_counter()
    response = client.get(url)
    elapsed = time.perf_counter() - start
    response.raise_for_status()
    return elapsed


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        left, right = build(root)
        port, admin_port = free_port(), free_port()
        tables = [{"name": "big", "location": str(left)}, {"name": "br", "location": str(right)}]
        config = {
            "authorization": {"bearerToken": TOKEN},
            "signingKey": "bench",
            "accessLog": False,
            "admin": {"port": admin_port, "tokens": [ADMIN_TOKEN]},
            "shares": [{"name": "bench", "schemas": [{"name": "default", "tables": tables}]}],
        }
        (root / "server.yaml").write_text(yaml.safe_dump(config))
        command = [sys.executable, "-m", "deltaport.server", "--config", str(root / "server.yaml")]
        process = subprocess.Popen(
            [*command, "--host", "127.0.0.1", "--port", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait(f"http://127.0.0.1:{admin_port}/api/openapi.json", process)
            run(port, admin_port)
        finally:
            process.terminate()
            process.wait(10)


def run(port: int, admin_port: int) -> None:
    sharing = httpx.Client(
        base_url=f"http://127.0.0.1:{port}",
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=300,
    )
    console = httpx.Client(base_url=f"http://127.0.0.1:{admin_port}", timeout=300)
    console.get("/console/login")
    console.post(
        "/console/login",
        data={"csrf": console.cookies["deltaport_login_csrf"], "token": ADMIN_TOKEN},
    )
    table = "/console/tables/bench.default.big"
    urls = {
        "table page": table,
        "history, first page": f"{table}/history",
        "files, first page": f"{table}/files",
        "diff page": "/console/diff?left=bench.default.big&right=bench.default.br",
    }
    first = {"/metadata": timed(sharing, METADATA)}
    first |= {name: timed(console, url) for name, url in urls.items()}
    times: dict[str, list[float]] = {name: [] for name in ["/metadata", *urls]}
    for _ in range(ROUNDS):
        times["/metadata"].append(timed(sharing, METADATA))
        for name, url in urls.items():
            times[name].append(timed(console, url))
    base = statistics.median(times["/metadata"])
    print(f"table: {N_FILES:,} files, {N_COMMITS:,} commits; medians of {ROUNDS} rounds (warm)")
    print(f"{'request':<22}{'first (s)':>11}{'median (ms)':>13}{'vs /metadata':>14}")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:<22}{first[name]:>11.2f}{median * 1000:>13.1f}{median / base:>13.2f}x")


if __name__ == "__main__":
    main()
