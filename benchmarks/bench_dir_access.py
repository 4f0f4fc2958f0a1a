"""Directory mode against url mode on the S3 emulator (moto in server mode, in this
process), with a real ``deltaport.server`` process vending STS credentials.

Two tables, both in the emulated bucket:

- ``big``: a log of 100,000 files (a checkpoint and two commits, from
  ``checkpointed_log``) whose data files are *not* written (uploading 100,000 objects to
  moto and reading them back per load would measure moto). For it only the time to
  plan is measured: the file list, signed by the server (url) or replayed from the log
  by the client (dir).
- ``small``: 2,000 real parquet files of 100 rows: time to the first row and to the
  whole table.

For each load the server's CPU seconds (utime + stime from /proc/<pid>/stat) are read
before and after. Runs alternate between modes; medians are printed with dir/url ratios.

    uv run --frozen python benchmarks/bench_dir_access.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import obstore
import pyarrow as pa
import pyarrow.parquet as pq
from obstore.store import S3Store

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from checkpointed_log import CHECKPOINT_VERSION, write_checkpoint, write_commit

from deltaport.client import SharingClient, TableScan
from sharing_server import TOKEN, start_server, stop_server

BUCKET = "bench"
BIG_FILES = 100_000
SMALL_FILES = 2_000
ROLE = "arn:aws:iam::123456789012:role/bench"


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def upload_dir(store: S3Store, source: Path, prefix: str) -> None:
    paths = [p for p in source.rglob("*") if p.is_file()]

    def put(path: Path) -> None:
        obstore.put(store, f"{prefix}/{path.relative_to(source).as_posix()}", path.read_bytes())

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(put, paths))


def write_small_table(root: Path) -> None:
    (root / "_delta_log").mkdir(parents=True)
    schema = {
        "type": "struct",
        "fields": [{"name": "id", "type": "long", "nullable": True, "metadata": {}}],
    }
    lines: list[dict[str, object]] = [
        {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
        {
            "metaData": {
                "id": str(uuid.uuid4()),
                "format": {"provider": "parquet", "options": {}},
                "schemaString": json.dumps(schema),
                "partitionColumns": [],
                "configuration": {},
                "createdTime": 0,
            }
        },
    ]
    for i in range(SMALL_FILES):
        name = f"part-{i:05d}.parquet"
        pq.write_table(
            pa.table({"id": pa.array(range(i * 100, i * 100 + 100), pa.int64())}), root / name
        )
        size = (root / name).stat().st_size
        stats = json.dumps(
            {"numRecords": 100, "minValues": {"id": i * 100}, "maxValues": {"id": i * 100 + 99}}
        )
        lines.append(
            {
                "add": {
                    "path": name,
                    "partitionValues": {},
                    "size": size,
                    "modificationTime": 0,
                    "dataChange": True,
                    "stats": stats,
                }
            }
        )
    text = "\n".join(json.dumps(line) for line in lines) + "\n"
    (root / "_delta_log" / "00000000000000000000.json").write_text(text)


def write_big_log(root: Path) -> None:
    log = root / "_delta_log"
    log.mkdir(parents=True)
    write_checkpoint(log, BIG_FILES, str(uuid.uuid4()))
    for version in (CHECKPOINT_VERSION + 1, CHECKPOINT_VERSION + 2):
        write_commit(log, version, BIG_FILES)


def measure(pid: int, load: Callable[[], float | None]) -> tuple[float, float | None, float]:
    """(seconds, seconds to the first row or None, server CPU seconds) of one load."""
    cpu = cpu_seconds(pid)
    start = time.perf_counter()
    first = load()
    elapsed = time.perf_counter() - start
    return elapsed, (first - start if first is not None else None), cpu_seconds(pid) - cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    from moto.server import ThreadedMotoServer

    from emulators import S3Emulator, free_port, wait_for_port

    port = free_port()
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    moto.start()
    wait_for_port(port)
    s3 = S3Emulator(f"http://127.0.0.1:{port}")
    httpx.put(f"{s3.endpoint}/{BUCKET}").raise_for_status()
    store = S3Store(BUCKET, config=s3.options)  # type: ignore[arg-type]
    with tempfile.TemporaryDirectory() as tmp_text:
        tmp = Path(tmp_text)
        write_big_log(tmp / "big")
        write_small_table(tmp / "small")
        upload_dir(store, tmp / "big", "big")
        upload_dir(store, tmp / "small", "small")
        tables = [
            {
                "name": n,
                "location": f"s3://{BUCKET}/{n}",
                "accessModes": ["url", "dir"],
                "historyShared": True,
            }
            for n in ("big", "small")
        ]
        config = {
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
            "shares": [{"name": "s", "schemas": [{"name": "sc", "tables": tables}]}],
        }
        server = start_server(config, tmp / "server")
        profile = tmp / "p.share"
        profile.write_text(
            json.dumps({"shareCredentialsVersion": 1, "endpoint": server.url, "bearerToken": TOKEN})
        )
        recipient = {k: v for k, v in s3.options.items() if "access_key" not in k}
        pid = server.process.pid
        try:
            run(profile, recipient, pid, args.runs)
        finally:
            stop_server(server)
            moto.stop()


def run(profile: Path, recipient: dict[str, str], pid: int, runs: int) -> None:
    def plan(mode: str) -> Callable[[], float | None]:
        def load() -> float | None:
            with SharingClient(profile, access_mode=mode, storage_options=recipient) as client:  # type: ignore[arg-type]
                handle = client.table("s.sc.big")
                scan = handle.snapshot()
                if isinstance(scan, TableScan):
                    assert len(scan.plan().files) >= BIG_FILES
                else:
                    assert scan.selected().files.num_rows >= BIG_FILES
            return None

        return load

    def whole(mode: str) -> Callable[[], float | None]:
        def load() -> float | None:
            with SharingClient(profile, access_mode=mode, storage_options=recipient) as client:  # type: ignore[arg-type]
                first: float | None = None
                rows = 0
                for batch in client.table("s.sc.small").snapshot().to_batches():
                    first = first or time.perf_counter()
                    rows += batch.num_rows
                assert rows == SMALL_FILES * 100
            return first

        return load

    results: dict[tuple[str, str], list[tuple[float, float | None, float]]] = {}
    for _ in range(runs):
        for what, make in (("plan 100k", plan), ("load 2k", whole)):
            for mode in ("url", "dir"):
                results.setdefault((what, mode), []).append(measure(pid, make(mode)))
    print(f"medians of {runs} alternating runs; moto S3+STS in this process, server in its own")
    print("big: 100,000-file log without data files (time to plan only); small: 2,000 real files")
    for what in ("plan 100k", "load 2k"):
        medians = {}
        for mode in ("url", "dir"):
            rows = results[(what, mode)]
            total = statistics.median(r[0] for r in rows)
            firsts = [r[1] for r in rows if r[1] is not None]
            first = statistics.median(firsts) if firsts else None
            cpu = statistics.median(r[2] for r in rows)
            medians[mode] = (total, first, cpu)
            shown_first = f"first row {first:7.3f} s  " if first is not None else ""
            print(f"{what:10} {mode}: total {total:7.3f} s  {shown_first}server CPU {cpu:6.3f} s")
        (ut, uf, uc), (dt_, df, dc) = medians["url"], medians["dir"]
        ratio_first = f"  first row {df / uf:5.2f}" if uf and df else ""
        cpu_ratio = f"{dc / uc:6.3f}" if uc else "n/a"
        print(f"{what:10} dir/url: total {dt_ / ut:5.2f}{ratio_first}  server CPU {cpu_ratio}")


if __name__ == "__main__":
    main()
