"""Paged reads of a 1,000,000-file table: time to first byte and the server's peak memory.

Builds a log-only table (a classic checkpoint written with pyarrow in the protocol's
checkpoint schema, then one JSON commit), starts ``python -m deltaport.server`` on it and
reads the whole snapshot page by page (``maxFiles``, following
``endStreamAction.nextPageToken``), checking that every file comes exactly once. The same
run reads the table unpaged on a second fresh server as the baseline and prints the ratios.
Peak resident memory is the server process's ``VmHWM`` (target: under 1 GiB).

Run: ``uv run python benchmarks/bench_paging.py`` (about two minutes).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import yaml
from checkpointed_log import CHECKPOINT_VERSION, write_checkpoint, write_commit

N_FILES = 1_000_000
PAGE_FILES = 100_000
MEMORY_BUDGET = 1 << 30
QUERY = "/delta-sharing/shares/bench/schemas/default/tables/big/query"


def write_table(root: Path) -> None:
    """Checkpoint at version 10 with N_FILES adds, then an empty commit 11."""
    write_checkpoint(root / "_delta_log", N_FILES, "bench-paging")
    write_commit(root / "_delta_log", CHECKPOINT_VERSION + 1, N_FILES, adds=0)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def server(table: Path, work: Path) -> Iterator[tuple[str, int]]:
    """A fresh sharing server on ``table``: (base URL, process id)."""
    port = free_port()
    config = {
        "version": 1,
        "accessLog": False,
        "shares": [
            {
                "name": "bench",
                "schemas": [
                    {"name": "default", "tables": [{"name": "big", "location": str(table)}]}
                ],
            }
        ],
    }
    config_path = work / f"server-{port}.yaml"
    config_path.write_text(yaml.safe_dump(config))
    command = [sys.executable, "-m", "deltaport.server", "--config", str(config_path)]
    process = subprocess.Popen(
        [*command, "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(base + "/delta-sharing/shares", timeout=1)
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("the server did not start") from None
                time.sleep(0.1)
        yield base, process.pid
    finally:
        process.terminate()
        process.wait(10)


def peak_rss(pid: int) -> int:
    """The process's peak resident set size in bytes (``VmHWM``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc status")


@dataclass
class Read:
    first_byte: float
    total: float
    pages: int
    files: int
    peak_rss: int


def read(base: str, pid: int, max_files: int | None) -> Read:
    """Read the whole table (paged when ``max_files`` is set), checking no file repeats."""
    seen: set[bytes] = set()
    pages = 0
    token: str | None = None
    first_byte = 0.0
    start = time.perf_counter()
    with httpx.Client(base_url=base, timeout=600) as client:
        while True:
            body: dict[str, object] = {} if max_files is None else {"maxFiles": max_files}
            if token:
                body["pageToken"] = token
            token = None
            with client.stream("POST", QUERY, json=body) as response:
                response.raise_for_status()
                pending = b""
                for chunk in response.iter_bytes():
                    if not first_byte:
                        first_byte = time.perf_counter() - start
                    pending += chunk
                    *complete, pending = pending.split(b"\n")
                    for line in complete:
                        if line.startswith(b'{"file"'):
                            file_id = line[line.index(b'"id":"') + 6 :][:32]
                            if file_id in seen:
                                raise AssertionError("a file came twice")
                            seen.add(file_id)
                        elif line.startswith(b'{"endStreamAction"'):
                            token = json.loads(line)["endStreamAction"].get("nextPageToken")
            pages += 1
            if token is None:
                break
    total = time.perf_counter() - start
    if len(seen) != N_FILES:
        raise AssertionError(f"{len(seen)} files read, expected {N_FILES}")
    return Read(first_byte, total, pages, len(seen), peak_rss(pid))


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        started = time.perf_counter()
        write_table(work / "big")
        print(f"table with {N_FILES:,} files written in {time.perf_counter() - started:.1f} s")
        with server(work / "big", work) as (base, pid):
            idle = peak_rss(pid)
            paged = read(base, pid, PAGE_FILES)
        with server(work / "big", work) as (base, pid):
            whole = read(base, pid, None)
    mib = 1 << 20
    print(f"server at rest: peak RSS {idle / mib:.0f} MiB")
    for name, r in (("paged", paged), ("unpaged", whole)):
        print(
            f"{name:>8}: first byte {r.first_byte:.2f} s, all {r.files:,} files in "
            f"{r.total:.1f} s over {r.pages} page(s), server peak RSS {r.peak_rss / mib:.0f} MiB"
        )
    print(
        f"ratios paged/unpaged: first byte {paged.first_byte / whole.first_byte:.2f}, "
        f"total time {paged.total / whole.total:.2f}, "
        f"peak RSS {paged.peak_rss / whole.peak_rss:.2f}"
    )
    verdict = "OK" if paged.peak_rss < MEMORY_BUDGET else "OVER BUDGET"
    print(f"paged peak RSS / 1 GiB budget: {paged.peak_rss / MEMORY_BUDGET:.2f} ({verdict})")


if __name__ == "__main__":
    main()
