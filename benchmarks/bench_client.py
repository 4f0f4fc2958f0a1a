"""Recipient read speed: deltaport's client vs the official ``delta-sharing`` client vs
pyarrow reading the same parquet files straight from disk.

Two tables are generated once into a cache folder (pyarrow writes the data files, one
commit lists them, deltalake checks the result): a big one (``DELTAPORT_BENCH_MB``,
default 1024 MB, in 64 files) and one of many small files (``DELTAPORT_BENCH_SMALL_FILES``,
default 2000). A local ``deltaport.server`` process shares both. Timed in the same run:

- ``deltaport.client.load_as_arrow`` and ``load_as_pandas``;
- the official ``delta_sharing.load_as_pandas`` (1.4.2, in its own venv at
  ``.cache/peer-venv``, created with uv when missing; timed inside that process);
- ``pyarrow.parquet.read_table`` of the table's files from disk (and ``.to_pandas()``);
- the bytes alone, without decoding: one GET a file on 4 threads, and, for files the
  server sends in file batches, those batches on 4 threads.

Run: ``uv run python benchmarks/bench_client.py``. ``DELTAPORT_BENCH_CACHE`` moves the
cache (default ``.cache/bench-client``); ``DELTAPORT_BENCH_OFFICIAL=0`` skips the
official client.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import deltalake
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import yaml

import deltaport.client as dc
from deltaport.client.downloads import Downloads, downloads_for
from deltaport.client.file_batches import batched_files, fetch_batch
from deltaport.client.models import RemoteFile

REPO = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("DELTAPORT_BENCH_CACHE", REPO / ".cache" / "bench-client"))
PEER_VENV = Path(os.environ.get("DELTAPORT_PEER_VENV", REPO / ".cache" / "peer-venv"))
BIG_MB = int(os.environ.get("DELTAPORT_BENCH_MB", "1024"))
BIG_FILES = 64
SMALL_FILES = int(os.environ.get("DELTAPORT_BENCH_SMALL_FILES", "2000"))
SMALL_ROWS = 500
RUN_OFFICIAL = os.environ.get("DELTAPORT_BENCH_OFFICIAL", "1") != "0"
TOKEN = "bench-token"
BYTES_PER_ROW = 32  # two float64 and two int64 columns of random values: no compression

SCHEMA = pa.schema(
    [("id", pa.int64()), ("key", pa.int64()), ("x", pa.float64()), ("y", pa.float64())]
)
SCHEMA_STRING = json.dumps(
    {
        "type": "struct",
        "fields": [
            {
                "name": f.name,
                "type": "long" if f.type == pa.int64() else "double",
                "nullable": True,
                "metadata": {},
            }
            for f in SCHEMA
        ],
    }
)
OFFICIAL_SCRIPT = """
import sys, time
import delta_sharing
url = sys.argv[1]
started = time.perf_counter()
frame = delta_sharing.load_as_pandas(url)
print(time.perf_counter() - started, len(frame))
"""


def _batch(start: int, rows: int, rng: np.random.Generator) -> pa.Table:
    return pa.table(
        {
            "id": np.arange(start, start + rows, dtype=np.int64),
            "key": rng.integers(0, 2**62, rows, dtype=np.int64),
            "x": rng.random(rows),
            "y": rng.standard_normal(rows),
        },
        schema=SCHEMA,
    )


def build_table(root: Path, n_files: int, rows_per_file: int) -> Path:
    """Data files written with pyarrow, then one commit adding them all."""
    done = root / "_delta_log" / "00000000000000000000.json"
    if done.exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    (root / "_delta_log").mkdir(parents=True)
    rng = np.random.default_rng(7)
    lines: list[dict[str, Any]] = [
        {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
        {
            "metaData": {
                "id": str(uuid.uuid4()),
                "format": {"provider": "parquet", "options": {}},
                "schemaString": SCHEMA_STRING,
                "partitionColumns": [],
                "configuration": {},
                "createdTime": int(time.time() * 1000),
            }
        },
    ]
    for i in range(n_files):
        name = f"part-{i:05d}-{uuid.uuid4()}.snappy.parquet"
        pq.write_table(_batch(i * rows_per_file, rows_per_file, rng), root / name)
        stats = {"numRecords": rows_per_file}
        lines.append(
            {
                "add": {
                    "path": name,
                    "partitionValues": {},
                    "size": (root / name).stat().st_size,
                    "modificationTime": int(time.time() * 1000),
                    "dataChange": True,
                    "stats": json.dumps(stats),
                }
            }
        )
    tmp = done.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(line) + "\n" for line in lines))
    tmp.rename(done)
    rows = deltalake.DeltaTable(str(root)).to_pyarrow_dataset().count_rows()
    assert rows == n_files * rows_per_file, (rows, n_files * rows_per_file)
    return root


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(tables: dict[str, Path], workdir: Path) -> tuple[subprocess.Popen[bytes], str]:
    config = {
        "version": 1,
        "authorization": {"bearerToken": TOKEN},
        "signingKey": "bench-signing-key",
        "shares": [
            {
                "name": "bench",
                "schemas": [
                    {
                        "name": "s",
                        "tables": [{"name": n, "location": str(p)} for n, p in tables.items()],
                    }
                ],
            }
        ],
    }
    (workdir / "server.yaml").write_text(yaml.safe_dump(config))
    port = _free_port()
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "deltaport.server", "--config", str(workdir / "server.yaml")),
            *("--host", "127.0.0.1", "--port", str(port)),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}/delta-sharing"
    profile = workdir / "bench.share"
    profile.write_text(
        json.dumps({"shareCredentialsVersion": 1, "endpoint": endpoint, "bearerToken": TOKEN})
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with dc.SharingClient(profile) as client:
                client.list_shares()
            return process, str(profile)
        except dc.SharingError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError("the server did not start")


def official_python() -> Path | None:
    python = PEER_VENV / "bin" / "python"
    if not python.exists():
        if shutil.which("uv") is None:
            return None
        subprocess.run(["uv", "venv", str(PEER_VENV), "--python", "3.11"], check=True)
        subprocess.run(
            ["uv", "pip", "install", "--python", str(python), "delta-sharing==1.4.2"], check=True
        )
    return python


def best_of(runs: int, fn: Callable[[], Any]) -> tuple[float, Any]:
    """The best time of ``runs`` calls and the last result. Each call starts with the same
    memory in use: the previous result is released first (a gigabyte kept alive changes
    what the next read pays for fresh memory)."""
    best = float("inf")
    result: Any = None
    for _ in range(runs):
        result = None
        started = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - started)
    return best, result


def rows_in_best_of(runs: int, fn: Callable[[], Any]) -> tuple[float, int]:
    """:func:`best_of` keeping only the row count of the table or frame ``fn`` returns."""
    seconds, result = best_of(runs, fn)
    return seconds, len(result)


def official_seconds(python: Path, url: str, rows: int) -> float:
    result = subprocess.run(
        [str(python), "-c", OFFICIAL_SCRIPT, url], capture_output=True, text=True, check=True
    )
    seconds, count = result.stdout.split()[-2:]
    assert int(count) == rows, (count, rows)
    return float(seconds)


def fetch_bytes(urls: list[str], threads: int = 4) -> int:
    """GET every URL on ``threads`` kept-alive standard-library connections, keeping only
    the byte count: what serving and receiving the files costs, with no decoding."""
    local = threading.local()
    connections: list[http.client.HTTPConnection] = []

    def get(url: str) -> int:
        parts = urlsplit(url)
        connection = getattr(local, "connection", None)
        if connection is None:
            connection = local.connection = http.client.HTTPConnection(parts.netloc)
            connections.append(connection)
        connection.request("GET", f"{parts.path}?{parts.query}")
        return len(connection.getresponse().read())

    try:
        with ThreadPoolExecutor(threads) as pool:
            return sum(pool.map(get, urls))
    finally:
        for connection in connections:
            connection.close()


def fetch_batched_bytes(
    downloads: Downloads, batch_url: str | None, groups: list[tuple[RemoteFile, ...]]
) -> int:
    """POST each group to the server's file batch endpoint on 4 threads, keeping only the
    byte count: the transfer floor of a client reading in batches."""
    assert batch_url is not None

    def fetch(group: tuple[RemoteFile, ...]) -> int:
        contents = fetch_batch(downloads, batch_url, [f.url for f in group])
        assert all(c is not None for c in contents)
        return sum(len(c or b"") for c in contents)

    with ThreadPoolExecutor(4) as pool:
        return sum(pool.map(fetch, groups))


def bench(name: str, root: Path, profile: str, python: Path | None) -> None:
    url = f"{profile}#bench.s.{name}"
    files = sorted(str(p) for p in root.glob("*.parquet"))
    size_mb = sum(Path(f).stat().st_size for f in files) / 2**20
    runs = 2
    # only row counts are kept between measurements, so each starts with the same memory
    # (a result is released after its timing, not inside it)
    direct_arrow, rows = rows_in_best_of(runs, lambda: pq.read_table(files))
    direct_pandas, pandas_rows = rows_in_best_of(runs, lambda: pq.read_table(files).to_pandas())
    ours_arrow, ours_rows = rows_in_best_of(runs, lambda: dc.load_as_arrow(url))
    ours_pandas, ours_pandas_rows = rows_in_best_of(runs, lambda: dc.load_as_pandas(url))
    with dc.SharingClient(profile) as client:
        plan = client.table(f"bench.s.{name}").snapshot().plan()
        urls = [f.url for f in plan.files]
        transfer, size = best_of(runs, lambda: fetch_bytes(urls))
        assert size == sum(Path(f).stat().st_size for f in files)
        downloads = downloads_for(client.rest.http)
        groups = [g for g in batched_files(plan.files, plan.file_batch_url) if len(g) > 1]
        batched, batched_size = best_of(
            runs, lambda: fetch_batched_bytes(downloads, plan.file_batch_url, groups)
        )
    assert rows == pandas_rows == ours_rows == ours_pandas_rows
    print(f"\n{name}: {len(files)} files, {size_mb:,.0f} MB, {rows:,} rows")
    print(f"  pyarrow from disk     arrow {direct_arrow:7.2f} s   pandas {direct_pandas:7.2f} s")
    print(f"  deltaport client      arrow {ours_arrow:7.2f} s   pandas {ours_pandas:7.2f} s")
    print(
        f"  deltaport / direct    arrow {ours_arrow / direct_arrow:7.2f} x   "
        f"pandas {ours_pandas / direct_pandas:7.2f} x   (target <= 1.3)"
    )
    # the part of our load no client can save: the server sending the files and a bare
    # client receiving them over loopback, sharing the cores, before any decoding
    print(
        f"  bytes over HTTP only        {transfer:7.2f} s   "
        f"= {transfer / direct_arrow:.2f} x the direct arrow read (one GET a file)"
    )
    if groups:
        print(
            f"  bytes in file batches       {batched:7.2f} s   "
            f"= {batched / direct_arrow:.2f} x the direct arrow read "
            f"({sum(map(len, groups))} files in {len(groups)} batches, {batched_size:,} bytes)"
        )
    if python is not None:
        official = official_seconds(python, url, rows)
        print(f"  official client                      pandas {official:7.2f} s")
        print(
            f"  official / deltaport                 pandas {official / ours_pandas:7.2f} x"
            "   (target >= 5)"
        )
        # 5x over the official client needs a load within (official / direct) / 5 of the
        # direct read: printed so the two targets can be weighed against each other
        print(f"  official / direct                    pandas {official / direct_pandas:7.2f} x")


def main() -> None:
    big_rows = BIG_MB * 2**20 // BYTES_PER_ROW // BIG_FILES
    print(f"building tables in {CACHE} (cached between runs) ...", flush=True)
    tables = {
        "big": build_table(CACHE / f"big-{BIG_MB}mb", BIG_FILES, big_rows),
        "small": build_table(CACHE / f"small-{SMALL_FILES}", SMALL_FILES, SMALL_ROWS),
    }
    python = official_python() if RUN_OFFICIAL else None
    with tempfile.TemporaryDirectory() as work:
        process, profile = start_server(tables, Path(work))
        try:
            for name, root in tables.items():
                bench(name, root, profile, python)
        finally:
            process.terminate()
            process.wait(10)


if __name__ == "__main__":
    main()
