"""The audit log's cost, in one run.

1. ``POST .../query`` requests per second on a small table (3 files) of a server on a
   SQLite catalog, with the audit log on (records in the database) and off
   (``audit.database: false``), :data:`bench_server.CONCURRENCY` keep-alive clients, the
   two measured in turn for :data:`ROUNDS` rounds (a fresh server each time, which goes
   first alternating); the ratio of the medians (target: at least 0.9x). On a machine
   shared with other work one rate moved between 400 and 720 requests/s from round to
   round: read the ratio with that in mind.
2. A filtered page of 100 records out of :data:`N_RECORDS` in the catalog database:
   by recipient, by table, by recipient and time range, and by a status no record has,
   median of 5 (target: under 100 ms).

Run: ``uv run python benchmarks/bench_audit.py`` (about two minutes).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import yaml
from bench_server import free_port, requests_per_second, serving
from deltalake import write_deltalake

from deltaport.catalog.sql_store import SqlCatalog
from deltaport.observe.audit_record import QUERIED_TABLE, AuditRecord
from deltaport.observe.audit_store import AuditFilter, read_page, write

ROUNDS = 5
N_RECORDS = 1_000_000
PAGE_TARGET_MS = 100
QUERY = "/delta-sharing/shares/bench/schemas/default/tables/small/query"


def catalog_server(tmp: Path) -> tuple[str, str]:
    """A SQLite catalog with one small table granted to one recipient; its URL and the
    recipient's token."""
    table = tmp / "small"
    for i in range(3):
        write_deltalake(str(table), pa.table({"id": pa.array([i], pa.int64())}), mode="append")
    url = f"sqlite:///{tmp}/catalog.db"
    catalog = SqlCatalog(url)
    catalog.create_share("bench")
    catalog.add_table("bench", "default", "small", str(table))
    issued = catalog.create_recipient("reader")
    catalog.grant("bench", "reader")
    return url, issued.token


def query_rate(tmp: Path, url: str, token: str, audit: bool) -> float:
    config = tmp / ("on.yaml" if audit else "off.yaml")
    config.write_text(yaml.safe_dump({"accessLog": False, "audit": {"database": audit}}))
    port = free_port()
    command = [str(Path(sys.executable).parent / "deltaport"), "serve", "--config", str(config)]
    command += ["--catalog", url, "--host", "127.0.0.1", "--port", str(port)]
    with serving(command, port, "/delta-sharing/openapi.json"):
        return requests_per_second(port, QUERY, token, b"{}")


def fill(catalog: SqlCatalog) -> int:
    """:data:`N_RECORDS` records over 30 days: 100 recipients, 1,000 tables; returns the
    time of the last."""
    start = 1_790_000_000_000
    step = 30 * 86_400_000 // N_RECORDS
    batch = []
    for i in range(N_RECORDS):
        batch.append(
            AuditRecord(
                time_ms=start + i * step,
                operation=QUERIED_TABLE,
                status=200,
                duration_ms=3,
                recipient=f"r{i % 100}",
                client_address="10.0.0.1",
                share=f"s{i % 10}",
                table=f"s{i % 10}.d.t{i % 1000}",
                version=i % 50,
                files=2,
                bytes=4096,
            )
        )
        if len(batch) == 50_000:
            write(catalog.database, batch)
            batch = []
    return start + (N_RECORDS - 1) * step


def page_ms(catalog: SqlCatalog, where: AuditFilter) -> tuple[float, int]:
    times = []
    for _ in range(5):
        began = time.perf_counter()
        page = read_page(catalog.database, where, 100)
        times.append(time.perf_counter() - began)
    return statistics.median(times) * 1000, len(page.records)


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        url, token = catalog_server(tmp)
        on: list[float] = []
        off: list[float] = []
        for round_ in range(ROUNDS):  # which goes first alternates
            for audit in (True, False) if round_ % 2 else (False, True):
                (on if audit else off).append(query_rate(tmp, url, token, audit))
        ratio = statistics.median(on) / statistics.median(off)
        print(
            f"/query requests/s: audit off {statistics.median(off):.0f}, "
            f"on {statistics.median(on):.0f}, ratio {ratio:.2f}x (target >= 0.9x)"
        )

        catalog = SqlCatalog(f"sqlite:///{tmp}/records.db")
        began = time.perf_counter()
        last = fill(catalog)
        print(f"{N_RECORDS:,} records written in {time.perf_counter() - began:.0f} s")
        day = 86_400_000
        old_day = AuditFilter(recipient="r42", since=last - 20 * day, until=last - 19 * day)
        for label, where in (
            ("recipient", AuditFilter(recipient="r42")),
            ("table", AuditFilter(table="s7.d.t517")),
            ("recipient, last week", AuditFilter(recipient="r42", since=last - 7 * day)),
            ("recipient, a day 20 days ago", old_day),
            ("operation and status none has", AuditFilter(operation=QUERIED_TABLE, status=403)),
        ):
            ms, found = page_ms(catalog, where)
            print(f"page by {label}: {ms:.1f} ms, {found} records (target < {PAGE_TARGET_MS} ms)")


if __name__ == "__main__":
    main()
