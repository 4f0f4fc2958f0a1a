"""The audit log's cost, in one run.

1. ``POST .../query`` requests per second on a small table (3 files) of a server on a
   SQLite catalog, with the audit log on (records in the database) and off
   (``audit.database: false``), :data:`bench_server.CONCURRENCY` keep-alive clients, the
   two measured in turn for :data:`ROUNDS` rounds (a fresh server each time, which goes
   first alternating); the ratio of the medians (target: at least 0.9x). On a machine
   shared with other work one rate moved between 400 and 720 requests/s from round to
   round: read the ratio with that in mind.
2. What the record path costs a ``/query``, in CPU microseconds, steadier than the rates:
   the sharing listener's hook on a streamed answer (kept against the same answer not
   audited), and the writer's work for a record (a batch of :data:`RECORDS_A_FLUSH`
   written to SQLite in one transaction).
3. A filtered page of 100 records out of :data:`N_RECORDS` in the catalog database:
   by recipient, by table, by recipient and time range, and by a status no record has,
   median of 5 (target: under 100 ms).

Run: ``uv run python benchmarks/bench_audit.py`` (about two minutes).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pyarrow as pa
import yaml
from bench_server import free_port, requests_per_second, serving
from deltalake import write_deltalake
from starlette.requests import Request
from starlette.responses import StreamingResponse

from deltaport.catalog.database.connection import Database
from deltaport.catalog.database.migrations import migrate
from deltaport.catalog.rows import TableSpec
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.observe.audit_log import AuditLog
from deltaport.observe.audit_record import QUERIED_TABLE, AuditRecord
from deltaport.observe.audit_store import AuditFilter, read_page, write
from deltaport.server.http.audited import SharingAudit

ROUNDS = 5
RECORDS_A_FLUSH = 1000
N_RECORDS = 1_000_000
START_MS = 1_790_000_000_000
STEP_MS = 30 * 86_400_000 // N_RECORDS
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
    catalog.add_table("bench", "default", "small", TableSpec(str(table)))
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


def _answer() -> AsyncIterator[bytes]:
    """A small table's snapshot answer, a line a chunk."""

    async def lines() -> AsyncIterator[bytes]:
        yield b'{"protocol":{"minReaderVersion":1}}\n'
        yield b'{"metaData":{"id":"t","format":{"provider":"parquet"}}}\n'
        for i in range(3):
            yield b'{"file":{"url":"u","id":"%d","size":700}}\n' % i

    return lines()


def _request() -> Request:
    scope = {
        "type": "http",
        "method": "POST",
        "path": QUERY,
        "headers": [(b"user-agent", b"bench/1"), (b"content-type", b"application/json")],
        "client": ("127.0.0.1", 50000),
        "path_params": {"share": "bench", "schema": "default", "table": "small"},
        "query_string": b"",
    }
    request = Request(scope)
    request._body = b"{}"
    return request


async def _hook_us(audit: SharingAudit | None, n: int = 5000) -> float:
    began = time.process_time()
    for _ in range(n):
        request = _request()
        response = StreamingResponse(_answer(), headers={"delta-table-version": "3"})
        if audit is not None:
            started = audit.start()
            response = await audit.answered(request, QUERIED_TABLE, started, "r", response, None)
        async for _ in response.body_iterator:
            pass
    return (time.process_time() - began) / n * 1e6


def record_path_us(tmp: Path) -> tuple[float, float]:
    """CPU microseconds a ``/query`` record costs: on the request path (the hook and the
    buffer), and on the writer's thread."""
    database = Database(f"sqlite:///{tmp}/path.db", create=True)
    migrate(database)
    log = AuditLog(database, flush_seconds=3600)
    hook = statistics.median(
        asyncio.run(_hook_us(SharingAudit(log))) - asyncio.run(_hook_us(None)) for _ in range(3)
    )
    writes = []
    for _ in range(3):
        log.flush()
        for _ in range(RECORDS_A_FLUSH):
            log.record(_bench_record(0))
        began = time.process_time()
        log.flush()
        writes.append((time.process_time() - began) / RECORDS_A_FLUSH * 1e6)
    log.close()
    database.close()
    return hook, statistics.median(writes)


def _bench_record(i: int) -> AuditRecord:
    """The ``i``-th of :data:`N_RECORDS` records over 30 days: 100 recipients, 1,000
    tables."""
    return AuditRecord(
        time_ms=START_MS + i * STEP_MS,
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


def fill(catalog: SqlCatalog) -> int:
    """:data:`N_RECORDS` records over 30 days: 100 recipients, 1,000 tables; returns the
    time of the last."""
    batch = []
    for i in range(N_RECORDS):
        batch.append(_bench_record(i))
        if len(batch) == 50_000:
            write(catalog.database, batch)
            batch = []
    return START_MS + (N_RECORDS - 1) * STEP_MS


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

        hook, writer = record_path_us(tmp)
        print(
            f"/query record path: {hook:.1f} us of CPU on the request path, "
            f"{writer:.1f} us on the writer's thread"
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
