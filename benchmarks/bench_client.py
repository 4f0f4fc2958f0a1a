"""Recipient read speed: deltaport's client vs the official ``delta-sharing`` client vs
pyarrow reading the same parquet files straight from disk.

Two tables are generated once into a cache folder (pyarrow writes the data files, one
commit lists them, deltalake checks the result): a big one (``DELTAPORT_BENCH_MB``,
default 1024 MB, in 64 files) and one of many small files (``DELTAPORT_BENCH_SMALL_FILES``,
default 2000). A local ``deltaport.server`` process shares both. Timed in the same run:

- ``deltaport.client.load_as_arrow`` and ``load_as_pandas``;
- the official ``delta_sharing.load_as_pandas`` (1.4.2, in its own venv at
  ``.cache/peer-venv``, created with uv when missing; two loads in one new process, timed
  inside it: the first compared with deltaport's loads in new processes, the second with
  those in a warm one);
- ``pyarrow.parquet.read_table`` of the table's files from disk (and ``.to_pandas()``);
- a plain HTTP reader, the least a client of the protocol does: it asks the server for
  the file URLs (one query), GETs the files on ``PLAIN_THREADS`` kept-alive standard-library
  connections and decodes each whole with ``pyarrow.parquet.read_table`` as it arrives, with
  no retries, checks, casts or bounds on memory (``plain arrow``, and ``plain pandas`` with
  ``.to_pandas()``). On big files it is the floor of any client reading over HTTP on this
  machine; on small files deltaport's file batches (a server extension) go below it;
- the bytes alone, without decoding: one GET a file on 4 threads, and, for files the
  server sends in file batches, those batches on 4 threads.

Each of the six loads runs in processes of its own, ``ROUNDS`` of them, the loads taking
turns so a machine that gets busier or quieter during the run slows them all alike. A
process loads the table ``LOADS_PER_PROCESS`` times, timed inside it: its first load is
that of a job that reads a table once (in a new process, after the imports), the later
ones those of a notebook or service that reads again and again (a warm process). Loads
of different kinds never share a process: each would hold memory in its allocators that
the other cannot reuse. The best times are compared (medians in parentheses). On a
virtual machine the first touch of fresh memory can cost from 0.1 to over 2 s per GB, so
the two can differ a lot; both are printed. The bytes alone are timed in this process,
alternating, after a warm-up round.

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
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import deltalake
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import yaml

import deltaport.client as dc
from deltaport.client.base.models import RemoteFile, Table
from deltaport.client.files.downloads import Downloads, downloads_for
from deltaport.client.files.file_batches import batched_files, fetch_batch
from deltaport.protocol.profile import split_table_url

REPO = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("DELTAPORT_BENCH_CACHE", REPO / ".cache" / "bench-client"))
PEER_VENV = Path(os.environ.get("DELTAPORT_PEER_VENV", REPO / ".cache" / "peer-venv"))
BIG_MB = int(os.environ.get("DELTAPORT_BENCH_MB", "1024"))
BIG_FILES = 64
SMALL_FILES = int(os.environ.get("DELTAPORT_BENCH_SMALL_FILES", "2000"))
SMALL_ROWS = 500
RUN_OFFICIAL = os.environ.get("DELTAPORT_BENCH_OFFICIAL", "1") != "0"
PLAIN_THREADS = 8
ROUNDS = 3
LOADS_PER_PROCESS = 3
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
for _ in range(2):
    frame = None
    started = time.perf_counter()
    frame = delta_sharing.load_as_pandas(url)
    print(time.perf_counter() - started, len(frame))
"""
"""Two loads in one new process: the first as a job that reads a table once, the second
as a warm process does (the pair of each of deltaport's two timings)."""


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


@dataclass(frozen=True)
class Timing:
    best: float
    median: float
    size: int
    """Rows or bytes the reader reported."""


Reader = Callable[[], int]
"""One read, returning only a size (rows or bytes): every call then starts with the
same memory in use (a gigabyte kept alive changes what the next read pays for fresh
memory)."""


def data_files(root: Path) -> list[str]:
    return sorted(str(p) for p in root.glob("*.parquet"))


def loads(url: str, files: list[str]) -> dict[str, Reader]:
    """The loads compared: pyarrow from disk, the plain HTTP reader, deltaport's client."""
    return {
        "direct arrow": lambda: len(pq.read_table(files)),
        "direct pandas": lambda: len(pq.read_table(files).to_pandas()),
        "plain arrow": lambda: len(plain_read(url)),
        "plain pandas": lambda: len(plain_read(url).to_pandas()),
        "ours arrow": lambda: len(dc.load_as_arrow(url)),
        "ours pandas": lambda: len(dc.load_as_pandas(url)),
    }


def plain_read(url: str) -> pa.Table:
    """The table at ``url`` read by the least an HTTP client must do: one query for the
    file URLs, then each file fetched on one of ``PLAIN_THREADS`` kept-alive connections
    and decoded whole in the thread that fetched it."""
    profile, share, schema, name = split_table_url(url)
    with dc.SharingClient(profile) as client:
        urls = [f.url for f in client.table(Table(name, share, schema)).snapshot().plan().files]
    with ThreadConnections() as connections, ThreadPoolExecutor(PLAIN_THREADS) as pool:
        return pa.concat_tables(
            pool.map(lambda u: pq.read_table(pa.BufferReader(connections.get(u))), urls)
        )


class ThreadConnections:
    """GETs on one kept-alive standard-library connection per thread."""

    def __init__(self) -> None:
        self._local = threading.local()
        self._all: list[http.client.HTTPConnection] = []

    def get(self, url: str) -> bytes:
        parts = urlsplit(url)
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = self._local.connection = http.client.HTTPConnection(parts.netloc)
            self._all.append(connection)
        connection.request("GET", f"{parts.path}?{parts.query}")
        return connection.getresponse().read()

    def __enter__(self) -> ThreadConnections:
        return self

    def __exit__(self, *exc: object) -> None:
        for connection in self._all:
            connection.close()


def times_in_new_process(name: str, url: str, root: Path) -> list[tuple[float, int]]:
    """The times and sizes of ``LOADS_PER_PROCESS`` loads ``name`` in one new process."""
    command = [sys.executable, __file__, "--load", name, url, str(root), str(LOADS_PER_PROCESS)]
    output = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return [(float(seconds), int(size)) for seconds, size in map(str.split, output.splitlines())]


def timing(times: list[float], size: int) -> Timing:
    return Timing(min(times), statistics.median(times), size)


def loads_in_processes(url: str, root: Path) -> tuple[dict[str, Timing], dict[str, Timing]]:
    """Timings of each of :func:`loads` in new processes and in warm ones (see the
    module's documentation): ``ROUNDS`` processes a load, the loads taking turns."""
    names = list(loads(url, data_files(root)))
    first: dict[str, list[float]] = {name: [] for name in names}
    later: dict[str, list[float]] = {name: [] for name in names}
    sizes: dict[str, int] = {}
    for _ in range(ROUNDS):
        for name in names:
            (seconds, sizes[name]), *warm = times_in_new_process(name, url, root)
            first[name].append(seconds)
            later[name] += [seconds for seconds, _ in warm]
    return (
        {name: timing(first[name], sizes[name]) for name in names},
        {name: timing(later[name], sizes[name]) for name in names},
    )


def alternating_rounds(rounds: int, readers: dict[str, Reader]) -> dict[str, Timing]:
    """Each reader timed here in ``rounds`` rounds after a warm-up round, taking turns."""
    times: dict[str, list[float]] = {name: [] for name in readers}
    sizes: dict[str, int] = {}
    for round_ in range(rounds + 1):
        for name, reader in readers.items():
            started = time.perf_counter()
            sizes[name] = reader()
            if round_:
                times[name].append(time.perf_counter() - started)
    return {name: timing(times[name], sizes[name]) for name in readers}


def official_seconds(python: Path, url: str, rows: int) -> tuple[float, float]:
    """The official client's first and second load in one new process."""
    result = subprocess.run(
        [str(python), "-c", OFFICIAL_SCRIPT, url], capture_output=True, text=True, check=True
    )
    (first, first_rows), (second, second_rows) = (
        line.split() for line in result.stdout.splitlines()[-2:]
    )
    assert int(first_rows) == int(second_rows) == rows, (first_rows, second_rows, rows)
    return float(first), float(second)


def fetch_bytes(urls: list[str], threads: int = 4) -> int:
    """GET every URL on ``threads`` kept-alive standard-library connections, keeping only
    the byte count: what serving and receiving the files costs, with no decoding."""
    with ThreadConnections() as connections, ThreadPoolExecutor(threads) as pool:
        return sum(pool.map(lambda url: len(connections.get(url)), urls))


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


def seconds(timing: Timing) -> str:
    return f"{timing.best:5.2f} s ({timing.median:.2f})"


def ratio(ours: Timing, base: Timing) -> str:
    return f"{ours.best / base.best:5.2f} x ({ours.median / base.median:.2f})"


def print_loads(timings: dict[str, Timing]) -> None:
    direct_arrow, direct_pandas = timings["direct arrow"], timings["direct pandas"]
    plain_arrow, plain_pandas = timings["plain arrow"], timings["plain pandas"]
    ours_arrow, ours_pandas = timings["ours arrow"], timings["ours pandas"]
    print(
        f"    pyarrow from disk   arrow {seconds(direct_arrow)}   pandas {seconds(direct_pandas)}"
    )
    print(f"    plain HTTP reader   arrow {seconds(plain_arrow)}   pandas {seconds(plain_pandas)}")
    print(f"    deltaport client    arrow {seconds(ours_arrow)}   pandas {seconds(ours_pandas)}")
    print(
        f"    plain / direct      arrow {ratio(plain_arrow, direct_arrow)}   "
        f"pandas {ratio(plain_pandas, direct_pandas)}"
    )
    print(
        f"    deltaport / plain   arrow {ratio(ours_arrow, plain_arrow)}   "
        f"pandas {ratio(ours_pandas, plain_pandas)}"
    )
    print(
        f"    deltaport / direct  arrow {ratio(ours_arrow, direct_arrow)}   "
        f"pandas {ratio(ours_pandas, direct_pandas)}   (target <= 1.3)"
    )


def bench(name: str, root: Path, profile: str, python: Path | None) -> None:
    url = f"{profile}#bench.s.{name}"
    files = data_files(root)
    size_mb = sum(Path(f).stat().st_size for f in files) / 2**20
    fresh, warm = loads_in_processes(url, root)
    with dc.SharingClient(profile) as client:
        plan = client.table(f"bench.s.{name}").snapshot().plan()
        urls = [f.url for f in plan.files]
        downloads = downloads_for(client.rest.http)
        groups = [g for g in batched_files(plan.files, plan.file_batch_url) if len(g) > 1]
        readers: dict[str, Reader] = {"bytes": lambda: fetch_bytes(urls)}
        if groups:
            readers["batched bytes"] = lambda: fetch_batched_bytes(
                downloads, plan.file_batch_url, groups
            )
        transfers = alternating_rounds(ROUNDS, readers)
    rows = warm["direct arrow"].size
    assert all(t.size == rows for t in [*fresh.values(), *warm.values()])
    assert transfers["bytes"].size == sum(Path(f).stat().st_size for f in files)
    print(f"\n{name}: {len(files)} files, {size_mb:,.0f} MB, {rows:,} rows")
    print(f"  best (median) of {ROUNDS} new processes a load, the loads taking turns")
    print_loads(fresh)
    print(
        f"  best (median) of the {ROUNDS * (LOADS_PER_PROCESS - 1)} later loads in those "
        "processes (warm)"
    )
    print_loads(warm)
    direct_arrow = warm["direct arrow"]
    # the part of our load no client can save: the server sending the files and a bare
    # client receiving them over loopback, sharing the cores, before any decoding
    print(
        f"  bytes over HTTP only          {seconds(transfers['bytes'])}   "
        f"= {ratio(transfers['bytes'], direct_arrow)} the direct arrow read (one GET a file)"
    )
    if groups:
        batched = transfers["batched bytes"]
        print(
            f"  bytes in file batches         {seconds(batched)}   "
            f"= {ratio(batched, direct_arrow)} the direct arrow read "
            f"({sum(map(len, groups))} files in {len(groups)} batches, {batched.size:,} bytes)"
        )
    if python is not None:
        first, second = official_seconds(python, url, rows)
        print(
            f"  official client, pandas: first load in a new process {first:.2f} s, "
            f"second {second:.2f} s"
        )
        ours_fresh, ours_warm = fresh["ours pandas"].best, warm["ours pandas"].best
        print(
            f"  official / deltaport, pandas: new process {first / ours_fresh:.2f} x, "
            f"warm process {second / ours_warm:.2f} x   (target >= 5)"
        )
        # 5x over the official client needs a load within (official / direct) / 5 of the
        # direct read: printed so the two targets can be weighed against each other
        direct_fresh, direct_warm = fresh["direct pandas"].best, warm["direct pandas"].best
        print(
            f"  official / direct, pandas:    new process {first / direct_fresh:.2f} x, "
            f"warm process {second / direct_warm:.2f} x"
        )


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


def load_in_this_process(name: str, url: str, root: str, count: str) -> None:
    """Child mode (``--load NAME URL ROOT COUNT``): ``COUNT`` loads, printing the time and
    size of each. The modules both kinds of load import on first use are imported before
    the clock starts, as in a job that has already imported what it works with."""
    import pandas  # noqa: F401
    import pyarrow.dataset  # noqa: F401

    load = loads(url, data_files(Path(root)))[name]
    for _ in range(int(count)):
        started = time.perf_counter()
        size = load()
        print(time.perf_counter() - started, size, flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--load"]:
        load_in_this_process(*sys.argv[2:6])
    else:
        main()
