"""Reloads of a 50,000-entry catalog, and what they cost the requests served meanwhile.

Builds a SQLite catalog of 50,000 tables (in 500 shares) and 50,000 recipients (each
granted one share, with one token), then:

1. times, in this process, a first load (reading the database and building the view) and
   a reload after one change (which reuses what did not change), medians of ``ROUNDS``;
2. starts a server on it and measures ``GET /shares`` of one recipient, one request after
   another, for ``LOAD_SECONDS`` without changes and then for ``LOAD_SECONDS`` while
   another thread changes the catalog every second (so that the server reloads it whole
   again and again); it prints the request rates and latencies of both and their ratio.

Requests never wait for a reload (it runs on a thread of its own): the slowest request
during reloads should be far shorter than one reload. The reload still shares the CPU (and
Python's GIL) with the requests, so the rate drops while it runs.

Run: ``uv run --frozen python benchmarks/bench_catalog_reload.py`` (about two minutes).
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import pyarrow as pa
from bench_server import deltaport_serving, free_port
from deltalake import write_deltalake

from deltaport.catalog.live.live_catalog import LiveCatalog
from deltaport.catalog.live.reading import read_all
from deltaport.catalog.live.snapshot import loaded
from deltaport.catalog.rows import TableSpec
from deltaport.catalog.sql_store import SqlCatalog

TABLES = 50_000
RECIPIENTS = 50_000
SHARES = 500
ROUNDS = 3
WINDOWS = 5
WINDOW_SECONDS = 6.0


def build(tmp: Path) -> tuple[str, str]:
    """The catalog's URL and the token of recipient r0 (granted share0)."""
    table = tmp / "table"
    write_deltalake(str(table), pa.table({"id": list(range(100))}))
    url = f"sqlite:///{tmp}/catalog.db"
    store = SqlCatalog(url)
    store.create_share("share0")
    store.add_table("share0", "s", "t0", TableSpec(str(table)))
    token = store.create_recipient("r0").token
    store.grant("share0", "r0")
    now = int(time.time() * 1000)
    modes, auxiliary = json.dumps(["url"]), json.dumps([])
    with sqlite3.connect(tmp / "catalog.db") as db:
        db.executemany(
            "INSERT INTO shares (name_key, name, id, comment, created_at) VALUES (?,?,?,?,?)",
            [(f"share{i}", f"share{i}", f"id-{i}", None, now) for i in range(1, SHARES)],
        )
        db.executemany(
            "INSERT INTO shared_tables (name_key, share_key, schema_name, name, location, id, "
            "history_shared, start_version, partition_filter, access_modes, "
            "auxiliary_locations, ordinal) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            [
                (
                    f"share{i % SHARES}.s.t{i}",
                    f"share{i % SHARES}",
                    "s",
                    f"t{i}",
                    str(table),
                    f"tid-{i}",
                    0,
                    0,
                    None,
                    modes,
                    auxiliary,
                    i + 1,
                )
                for i in range(1, TABLES)
            ],
        )
        db.executemany(
            "INSERT INTO recipients (name_key, name, properties, created_at) VALUES (?,?,?,?)",
            [(f"r{i}", f"r{i}", json.dumps({"region": "eu"}), now) for i in range(1, RECIPIENTS)],
        )
        db.executemany(
            "INSERT INTO tokens (hash, recipient_key, created_at) VALUES (?,?,?)",
            [(secrets.token_hex(32), f"r{i}", now) for i in range(1, RECIPIENTS)],
        )
        db.executemany(
            "INSERT INTO grants (share_key, recipient_key, created_at) VALUES (?,?,?)",
            [(f"share{i % SHARES}", f"r{i}", now) for i in range(1, RECIPIENTS)],
        )
        # rows put in behind the store's back are logged without a generation of their
        # own; an import of this size through the store would not be logged item by item
        db.execute("DELETE FROM catalog_changes")
    return url, token


def reload_seconds(url: str) -> tuple[float, float, float]:
    """Seconds of a first load, of a full reload and of a refresh after one change
    (medians)."""
    first, full, after_change = [], [], []
    store = SqlCatalog(url)
    for i in range(ROUNDS):
        started = time.perf_counter()
        live = LiveCatalog(SqlCatalog(url), lambda location: {})
        first.append(time.perf_counter() - started)
        started = time.perf_counter()
        loaded(read_all(live.store.database), lambda location: {})
        full.append(time.perf_counter() - started)
        store.grant("share0", f"r{i + 1}")
        started = time.perf_counter()
        live.refresh()
        after_change.append(time.perf_counter() - started)
        assert live.full_loads == 0, "the refresh read the whole catalog"
        store.revoke_grant("share0", f"r{i + 1}")
    return statistics.median(first), statistics.median(full), statistics.median(after_change)


def latencies(client: httpx.Client, seconds: float) -> list[float]:
    """Seconds of each ``GET /shares``, one after another, for ``seconds``."""
    taken = []
    stop_at = time.perf_counter() + seconds
    while time.perf_counter() < stop_at:
        started = time.perf_counter()
        response = client.get("/shares")
        taken.append(time.perf_counter() - started)
        if response.status_code != 200:
            raise RuntimeError(f"unexpected answer {response.status_code}: {response.text}")
    return taken


def changing(url: str, stop: threading.Event) -> int:
    """Grant and revoke a share to r1 every second until ``stop``; the changes made."""
    store = SqlCatalog(url)
    made = 0
    while not stop.wait(1.0):
        if made % 2:
            store.revoke_grant("share0", "r1")
        else:
            store.grant("share0", "r1")
        made += 1
    return made


def describe(name: str, taken: list[float]) -> str:
    ordered = sorted(taken)
    p99 = ordered[int(len(ordered) * 0.99)]
    median = statistics.median(taken) * 1000
    return (
        f"{name}: {len(taken) / (WINDOWS * WINDOW_SECONDS):,.0f} req/s, median {median:.1f} ms, "
        f"p99 {p99 * 1000:.1f} ms, slowest {ordered[-1] * 1000:.0f} ms"
    )


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="deltaport-bench-") as folder:
        tmp = Path(folder)
        started = time.perf_counter()
        url, token = build(tmp)
        print(
            f"catalog of {TABLES:,} tables in {SHARES} shares and {RECIPIENTS:,} recipients "
            f"built in {time.perf_counter() - started:.1f} s"
        )
        first, full, refresh = reload_seconds(url)
        print(
            f"medians of {ROUNDS}: first load (read + build) {first:.2f} s, full reload "
            f"{full:.2f} s, refresh after one change {refresh * 1000:.1f} ms "
            f"({refresh / full:.1%} of a full reload)"
        )
        config = tmp / "server.json"
        config.write_text(json.dumps({"catalog": url}))
        port = free_port()
        idle: list[float] = []
        busy: list[float] = []
        ratios: list[float] = []
        changes: list[int] = []
        with (
            deltaport_serving(config, port),
            httpx.Client(
                base_url=f"http://127.0.0.1:{port}/delta-sharing",
                headers={"Authorization": f"Bearer {token}"},
                timeout=60,
            ) as client,
        ):
            latencies(client, 1.0)  # warm up
            for _ in range(WINDOWS):
                quiet = latencies(client, WINDOW_SECONDS)
                stop = threading.Event()
                writer = threading.Thread(
                    target=lambda done=stop: changes.append(changing(url, done))
                )
                writer.start()
                changed = latencies(client, WINDOW_SECONDS)
                stop.set()
                writer.join()
                idle += quiet
                busy += changed
                ratios.append(len(changed) / len(quiet))
        print(describe("no changes      ", idle))
        print(describe(f"{sum(changes)} changes meanwhile", busy))
        print(
            f"rate during changes / without: median {statistics.median(ratios):.2f} of "
            f"{WINDOWS} alternating pairs ({', '.join(f'{r:.2f}' for r in ratios)}); "
            f"slowest request during changes / one full reload: {max(busy) / full:.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
