"""Time to the first row of a 1,000,000-file table with deltaport's client, synchronous
query against asynchronous query (``asyncquery=true``), in one run.

Builds a log-only table (a classic checkpoint of ``N_FILES`` adds written with pyarrow,
then an empty commit); only the first ``REAL_FILES`` data files exist (links to one small
parquet file), enough for the client's first batch. Each read starts a fresh
``python -m deltaport.server`` (a cold snapshot, as a recipient's first query meets it),
then times ``TableHandle.snapshot(async_query=...).to_batches()`` up to its first batch:
the query (its pages of 100,000 files, gathered into a plan) and the first file. It also
records the longest single HTTP request of the read: what a proxy's or load balancer's
timeout would have to allow. Reads alternate sync and async, ``ROUNDS`` of each; the best
and the median are printed.

Run: ``uv run python benchmarks/bench_async_query.py`` (a few minutes).
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa
import pyarrow.parquet as pq
from bench_paging import server
from checkpointed_log import CHECKPOINT_VERSION, file_path, write_checkpoint, write_commit

from deltaport.client import SharingClient
from deltaport.protocol.profile import BearerTokenProfile

N_FILES = 1_000_000
REAL_FILES = 256
ROUNDS = int(os.environ.get("DELTAPORT_BENCH_ROUNDS", "2"))


def write_table(root: Path) -> None:
    write_checkpoint(root / "_delta_log", N_FILES, "bench-async")
    write_commit(root / "_delta_log", CHECKPOINT_VERSION + 1, N_FILES, adds=0)
    sample = root / "sample.parquet"
    pq.write_table(pa.table({"id": pa.array(range(100), pa.int64())}), sample)
    for i in range(REAL_FILES):
        target = root / file_path(i)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.link(sample, target)


class _TimedTransport(httpx.HTTPTransport):
    """Reads each answer whole and keeps the longest request's duration."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.longest = 0.0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        started = time.perf_counter()
        response = super().handle_request(request)
        body = response.read()
        self.longest = max(self.longest, time.perf_counter() - started)
        return httpx.Response(response.status_code, headers=response.headers, content=body)


@dataclass
class Read:
    first_row: float
    longest_request: float


def first_row(base: str, async_query: bool) -> Read:
    limits = httpx.Limits(max_connections=36, max_keepalive_connections=36)
    transport = _TimedTransport(limits=limits)
    http = httpx.Client(transport=transport, timeout=httpx.Timeout(600.0, connect=30.0))
    profile = BearerTokenProfile(base + "/delta-sharing", "unused")
    started = time.perf_counter()
    with SharingClient(profile, http=http) as client:
        scan = client.table("bench.default.big").snapshot(async_query=async_query)
        batches = scan.to_batches()
        batch = next(iter(batches))
        elapsed = time.perf_counter() - started
        assert batch.num_rows > 0
        close = getattr(batches, "close", None)
        if close is not None:
            close()
    return Read(elapsed, transport.longest)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        started = time.perf_counter()
        write_table(work / "big")
        print(f"table with {N_FILES:,} files written in {time.perf_counter() - started:.1f} s")
        reads: dict[str, list[Read]] = {"sync": [], "async": []}
        for _ in range(ROUNDS):
            for name in reads:
                with server(work / "big", work) as (base, _pid):
                    reads[name].append(first_row(base, name == "async"))
    for name, rs in reads.items():
        rows = [r.first_row for r in rs]
        longest = [r.longest_request for r in rs]
        print(
            f"{name:>5}: first row {min(rows):.1f} s (median {statistics.median(rows):.1f}), "
            f"longest request {min(longest):.1f} s (median {statistics.median(longest):.1f})"
        )
    sync = min(r.first_row for r in reads["sync"])
    asynchronous = min(r.first_row for r in reads["async"])
    print(f"first row async/sync: {asynchronous / sync:.2f}")


if __name__ == "__main__":
    main()
