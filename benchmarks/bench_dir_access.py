"""Directory mode against url mode: loading a 100,000-file table from the S3 emulator.

The table (``--files``, default 100,000, plus 20 files in two commits after a checkpoint,
two of them removed) is written to moto for real: a checkpoint and two JSON commits from
``checkpointed_log``, and one small parquet file per add (100 ``id`` rows, uncompressed, so
every file has the same size, which the adds declare, with min/max stats a predicate could
skip on). Moto runs in server mode in its own process (S3 and STS), so it does not share the
GIL of the client being measured; a real ``deltaport.server`` process serves the table in
both modes and vends STS credentials (``storage[].credentials.awsRoleArn``) for ``dir``.

Each load is a new ``SharingClient`` reading the whole table with ``to_batches()``:

- ``url``: the server replays the log (its snapshot cache is warmed once before the runs,
  as on a long-running server) and signs one URL per file; the client GETs the files from
  moto with the signed URLs.
- ``dir``: the client asks the server for the table's metadata and an STS credential, then
  lists and replays the log and GETs the files from moto itself.
- ``moto floor``: moto alone: GETs of the same objects with obstore and as many threads as
  the client reads files with, no Delta and no server. Moto answers one request at a time
  (one GIL) at a few milliseconds of CPU each, so reading 100,000 files from it takes
  minutes in any mode: the floor says how much of a mode's time is moto's, and whatever a
  mode takes beyond it is the client's and the server's share.

Measured per load: the time to the first row and to the whole table (from creating the
client), the CPU seconds (utime + stime from ``/proc/<pid>/stat``) of the server, of this
process (the client) and of moto, and the requests moto answered (from its request log).
Runs alternate (each run rotates the order of the three loads); medians are printed with
the ratios dir / url and each mode / floor. The server spends a little CPU while it serves
nothing (about 1-2 ms a second here), which over a load of minutes is most of what ``dir``
costs it: that rate is measured during the floor loads, and the server's CPU per load net
of it is printed too. The upload (the parquet files made on the way) is timed first.

    uv run --frozen python benchmarks/bench_dir_access.py [--files 100000] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import obstore
import pyarrow as pa
import pyarrow.parquet as pq
from obstore.store import S3Store

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from checkpointed_log import CHECKPOINT_VERSION, file_path, write_checkpoint, write_commit

from deltaport.client import SharingClient
from deltaport.client.access import AccessMode
from deltaport.client.files.scan import DEFAULT_CONCURRENCY
from emulators import S3Emulator, free_port, wait_for_port
from sharing_server import TOKEN, start_server, stop_server

BUCKET = "bench"
TABLE = "t"
ROLE = "arn:aws:iam::123456789012:role/bench"
ROWS_PER_FILE = 100
COMMITS = (CHECKPOINT_VERSION + 1, CHECKPOINT_VERSION + 2)
ADDS_PER_COMMIT = 10
UPLOAD_CONCURRENCY = 32
"""PUTs in flight during the upload (moto answers them one at a time: more do not help)."""
MODES = ("url", "dir", "moto floor")
FLOOR_RATIOS = ("total", "client_cpu", "moto_cpu", "requests")
"""What a mode is compared to the floor in (the floor has no first row or server work)."""
_REQUEST_LINE = re.compile(rb'"(?:GET|PUT|POST|HEAD|DELETE) ')


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# -- moto in its own process ------------------------------------------------------------


@dataclass
class Moto:
    emulator: S3Emulator
    pid: int
    log: Path
    _offset: int = 0

    def requests(self) -> int:
        """Requests moto logged since the last call (werkzeug logs one line per request)."""
        with self.log.open("rb") as log:
            log.seek(self._offset)
            text = log.read()
        self._offset += len(text)
        return len(_REQUEST_LINE.findall(text))


@contextmanager
def moto_server(log: Path) -> Iterator[Moto]:
    """``python -m moto.server`` (moto's ``moto_server``) on a free port."""
    port = free_port()
    command = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        try:
            wait_for_port(port, process=process)
            yield Moto(S3Emulator(f"http://127.0.0.1:{port}"), process.pid, log)
        finally:
            process.terminate()
            process.wait(10)


# -- the table ----------------------------------------------------------------------------


def data_file(i: int) -> bytes:
    """File ``i``: ids ``100 i`` to ``100 i + 99``, as its add's stats say; plain encoding
    and no compression make every file the same size."""
    ids = pa.array(range(i * ROWS_PER_FILE, (i + 1) * ROWS_PER_FILE), pa.int64())
    out = io.BytesIO()
    pq.write_table(pa.table({"id": ids}), out, compression="none", use_dictionary=False)
    return out.getvalue()


def live_files(n_files: int) -> list[int]:
    """The files of the latest version: the checkpoint's, the commits' adds, less removes."""
    added = range(n_files + len(COMMITS) * ADDS_PER_COMMIT)
    return [i for i in added if i not in COMMITS]


def table_objects(n_files: int, log: Path) -> Iterator[tuple[str, bytes]]:
    """(key, bytes) of every object of the table: the log (written under ``log``), then
    each file ever added."""
    size = len(data_file(0))
    write_checkpoint(log, n_files, str(uuid.uuid4()), size=size)
    for version in COMMITS:
        write_commit(log, version, n_files, adds=ADDS_PER_COMMIT, size=size)
    for path in sorted(log.iterdir()):
        yield f"{TABLE}/_delta_log/{path.name}", path.read_bytes()
    for i in range(n_files + len(COMMITS) * ADDS_PER_COMMIT):
        data = data_file(i)
        assert len(data) == size, f"file {i} has {len(data)} bytes, its add says {size}"
        yield f"{TABLE}/{file_path(i)}", data


def upload(store: S3Store, objects: Iterator[tuple[str, bytes]]) -> int:
    """PUTs ``objects`` with :data:`UPLOAD_CONCURRENCY` in flight; how many there were."""

    async def worker() -> int:
        count = 0
        for key, data in objects:  # shared by the workers, all on the event loop's thread
            await obstore.put_async(store, key, data)
            count += 1
        return count

    async def workers() -> list[int]:
        return await asyncio.gather(*(worker() for _ in range(UPLOAD_CONCURRENCY)))

    return sum(asyncio.run(workers()))


def upload_table(store: S3Store, moto: Moto, n_files: int, log: Path) -> None:
    """Writes the table to moto (the files made on the way) and prints what it took."""
    moto_cpu = cpu_seconds(moto.pid)
    start = time.perf_counter()
    uploaded = upload(store, table_objects(n_files, log))
    took = time.perf_counter() - start
    moto_cpu = cpu_seconds(moto.pid) - moto_cpu
    print(
        f"upload: {uploaded:,} objects in {took:.1f} s ({uploaded / took:.0f}/s, "
        f"{UPLOAD_CONCURRENCY} in flight), moto CPU {moto_cpu:.1f} s",
        flush=True,
    )


# -- loads ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    first: float | None
    total: float
    server_cpu: float
    client_cpu: float
    moto_cpu: float
    requests: int


Load = Callable[[], float | None]
"""Reads everything; returns when (``perf_counter``) the first row came, if it has rows."""


def measure(server: int, moto: Moto, load: Load) -> Sample:
    moto.requests()
    before = cpu_seconds(server), time.process_time(), cpu_seconds(moto.pid)
    start = time.perf_counter()
    first = load()
    total = time.perf_counter() - start
    after = cpu_seconds(server), time.process_time(), cpu_seconds(moto.pid)
    server_cpu, client_cpu, moto_cpu = (b - a for a, b in zip(before, after, strict=True))
    since = first - start if first is not None else None
    return Sample(since, total, server_cpu, client_cpu, moto_cpu, moto.requests())


def table_load(profile: Path, recipient: dict[str, str], mode: AccessMode, rows: int) -> Load:
    def load() -> float | None:
        first: float | None = None
        count = 0
        with SharingClient(profile, access_mode=mode, storage_options=recipient) as client:
            for batch in client.table(f"s.sc.{TABLE}").snapshot().to_batches():
                first = first or time.perf_counter()
                count += batch.num_rows
        assert count == rows, f"{mode}: {count} rows, expected {rows}"
        return first

    return load


def floor_load(store: S3Store, keys: list[str]) -> Load:
    def get(key: str) -> int:
        return len(obstore.get(store, key).bytes())

    def load() -> float | None:
        with ThreadPoolExecutor(DEFAULT_CONCURRENCY) as pool:
            assert all(pool.map(get, keys))
        return None

    return load


# -- the run ----------------------------------------------------------------------------


def server_config(s3: S3Emulator) -> dict[str, object]:
    table = {
        "name": TABLE,
        "location": f"s3://{BUCKET}/{TABLE}",
        "accessModes": ["url", "dir"],
        "historyShared": True,
    }
    return {
        "version": 1,
        "authorization": {"bearerToken": "${DELTAPORT_TEST_TOKEN}"},
        "signingKey": "k",
        "storage": [
            {
                "prefix": f"s3://{BUCKET}/",
                "options": s3.options,
                "credentials": {"awsRoleArn": ROLE},
            }
        ],
        "shares": [{"name": "s", "schemas": [{"name": "sc", "tables": [table]}]}],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="dir mode against url mode, S3 emulator")
    parser.add_argument("--files", type=int, default=100_000, help="files in the checkpoint")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as tmp_text,
        moto_server(Path(tmp_text) / "moto.log") as moto,
    ):
        tmp = Path(tmp_text)
        s3 = moto.emulator
        s3.create_bucket(BUCKET)
        store = S3Store(BUCKET, config=s3.options)  # type: ignore[arg-type]
        upload_table(store, moto, args.files, tmp / "log")
        files = live_files(args.files)
        server = start_server(server_config(s3), tmp / "server")
        try:
            profile = tmp / "p.share"
            fields = {"shareCredentialsVersion": 1, "endpoint": server.url, "bearerToken": TOKEN}
            profile.write_text(json.dumps(fields))
            recipient = {k: v for k, v in s3.options.items() if "access_key" not in k}
            rows = len(files) * ROWS_PER_FILE
            loads = {mode: table_load(profile, recipient, mode, rows) for mode in ("url", "dir")}
            loads["moto floor"] = floor_load(store, [f"{TABLE}/{file_path(i)}" for i in files])
            for mode in ("url", "dir"):  # the server's snapshot and credentials cached
                with SharingClient(profile, access_mode=mode, storage_options=recipient) as c:
                    assert c.table(f"s.sc.{TABLE}").snapshot(limit=1).schema.names
            results = run(server.process.pid, moto, loads, args.runs)
        finally:
            stop_server(server)
    report(results, args.runs, len(files), rows)


def run(server: int, moto: Moto, loads: dict[str, Load], runs: int) -> dict[str, list[Sample]]:
    results: dict[str, list[Sample]] = {mode: [] for mode in MODES}
    for r in range(runs):
        for mode in MODES[r % len(MODES) :] + MODES[: r % len(MODES)]:
            sample = measure(server, moto, loads[mode])
            results[mode].append(sample)
            shown = f"{sample.first:.3f} s" if sample.first is not None else "-"
            print(f"run {r + 1} {mode}: first row {shown}, whole {sample.total:.1f} s", flush=True)
    return results


def report(results: dict[str, list[Sample]], runs: int, files: int, rows: int) -> None:
    def median(mode: str, field: str) -> float | None:
        values = [getattr(s, field) for s in results[mode] if getattr(s, field) is not None]
        return statistics.median(values) if values else None

    fields = ("first", "total", "server_cpu", "client_cpu", "moto_cpu", "requests")
    medians = {mode: {f: median(mode, f) for f in fields} for mode in MODES}
    print(
        f"\n{files:,} files, {rows:,} rows; medians of {runs} alternating runs; "
        f"{DEFAULT_CONCURRENCY} client threads; moto (S3 + STS) and the server in their own "
        "processes"
    )
    header = ("first row", "whole", "server CPU", "client CPU", "moto CPU", "moto requests")
    print(f"{'':11}" + "".join(f"{h:>14}" for h in header))
    for mode in MODES:
        cells = [_cell(medians[mode][f], f) for f in fields]
        print(f"{mode:11}" + "".join(f"{c:>14}" for c in cells))
    for top, bottom in (("dir", "url"), ("url", "moto floor"), ("dir", "moto floor")):
        shown = fields if bottom == "url" else FLOOR_RATIOS
        ratios = [_ratio(medians[top][f], medians[bottom][f]) if f in shown else "" for f in fields]
        print(f"{top + '/' + bottom.split()[-1]:11}" + "".join(f"{c:>14}" for c in ratios))
    floor = results["moto floor"]
    idle = sum(s.server_cpu for s in floor) / sum(s.total for s in floor)
    tick = 1 / os.sysconf("SC_CLK_TCK")
    net = {m: statistics.median(s.server_cpu - idle * s.total for s in results[m]) for m in MODES}

    def seconds(value: float) -> str:
        return f"{value:.2f} s" if value >= tick else f"< {tick:.2f} s"

    below = "< " if net["dir"] < tick else ""
    ratio = below + _ratio(max(net["dir"], tick), net["url"]) if net["url"] >= tick else "-"
    print(
        f"server CPU while idle (during the floor loads): {idle * 1000:.2f} ms per second; "
        f"server CPU per load net of it: url {seconds(net['url'])}, dir {seconds(net['dir'])}, "
        f"dir/url {ratio}"
    )


def _cell(value: float | None, field: str) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if field == "requests" else f"{value:.3f} s"


def _ratio(top: float | None, bottom: float | None) -> str:
    return f"{top / bottom:.3f}" if top is not None and bottom else "-"


if __name__ == "__main__":
    main()
