"""Iceberg metadata from a 100,000-file Delta table, against the Delta Sharing answer of
the same version, all through a real server on loopback.

Each round starts a server with an empty Iceberg metadata directory on a table of
``FILES`` files (a checkpoint, no data files needed) and measures:

1. a full ``/query`` of the latest version (after one warm-up query, so that the snapshot
   is cached as a recipient's second query would find it);
2. the first Iceberg load of that version (schema, manifests, manifest list, metadata);
3. a repeated load (nothing new to write);
4. after a one-file commit (one file added, one removed), the load of the new version
   (``COMMITS`` such commits one after the other, each load timed; the round's figure is
   their median, since a single load of a few tens of milliseconds is easily stretched by
   a busy machine).

It prints the medians of ``ROUNDS`` and the ratios: first load / query (target at most 2x),
repeated load / first load (at most 0.1x), load after the commit / first load (at most
0.05x).

Run: ``uv run --frozen python benchmarks/bench_iceberg.py`` (about two minutes).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx
import yaml
from bench_server import deltaport_serving, free_port
from checkpointed_log import CHECKPOINT_VERSION, write_checkpoint, write_commit

FILES = 100_000
ROUNDS = 3
COMMITS = 5
TOKEN = "bench-token"


def _timed(call: object) -> float:
    started = time.perf_counter()
    call()  # type: ignore[operator]
    return time.perf_counter() - started


def one_round(tmp: Path, table: Path) -> dict[str, float]:
    tmp.mkdir(parents=True)
    config = tmp / "server.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "version": 1,
                "authorization": {"bearerToken": TOKEN},
                "iceberg": {"metadataDirectory": str(tmp / "iceberg")},
                "shares": [
                    {
                        "name": "s",
                        "schemas": [
                            {"name": "d", "tables": [{"name": "t", "location": str(table)}]}
                        ],
                    }
                ],
            }
        )
    )
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    query = f"{base}/delta-sharing/shares/s/schemas/d/tables/t/query"
    load = f"{base}/iceberg/v1/shares/s/namespaces/d/tables/t"
    headers = {"Authorization": f"Bearer {TOKEN}"}
    out: dict[str, float] = {}
    with deltaport_serving(config, port), httpx.Client(headers=headers, timeout=600) as client:

        def full_query() -> None:
            answer = client.post(query, json={})
            answer.raise_for_status()
            assert answer.text.count('"file"') == FILES

        def iceberg_load() -> None:
            client.get(load).raise_for_status()

        full_query()
        out["query"] = _timed(full_query)
        out["first load"] = _timed(iceberg_load)
        out["repeated load"] = _timed(iceberg_load)
        version_url = f"{base}/delta-sharing/shares/s/schemas/d/tables/t/version"
        commits = [CHECKPOINT_VERSION + 1 + i for i in range(COMMITS)]
        after: list[float] = []
        try:
            for version in commits:
                write_commit(table / "_delta_log", version, FILES, adds=1)
                client.get(version_url)
                after.append(_timed(iceberg_load))
        finally:
            for version in commits:
                (table / "_delta_log" / f"{version:020d}.json").unlink(missing_ok=True)
        out["load after a commit"] = statistics.median(after)
    return out


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        table = tmp / "table"
        write_checkpoint(table / "_delta_log", FILES, "bench-iceberg")
        rounds = [one_round(tmp / f"round{i}", table) for i in range(ROUNDS)]
    median = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
    for name, seconds in median.items():
        print(f"{name:>22}: {seconds * 1000:9.1f} ms (median of {ROUNDS})")
    first = median["first load"]
    print(f"first load / query:          {first / median['query']:.2f}x (target <= 2)")
    print(f"repeated load / first load:  {median['repeated load'] / first:.3f}x (target <= 0.1)")
    after = median["load after a commit"] / first
    print(f"after a commit / first load: {after:.3f}x (target <= 0.05)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
