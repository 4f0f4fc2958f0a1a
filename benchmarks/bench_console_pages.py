"""The console's catalog pages against the catalog's own list calls, in one run.

A SQLite catalog of :data:`N_SHARES` shares (a table each), :data:`N_RECIPIENTS` recipients
(each granted one share, each with a token) and :data:`N_RECORDS` audit records over 30
days (100 recipients, 1,000 tables, one request in 97 refused), served by one
``deltaport serve --catalog`` process with the admin listener. Each console page is timed
against the admin listener's list call for the same records, over HTTP on the same
listener, signed in (the page) or with the admin token (the call):

- the audit log, first page, and filtered by recipient, by table and by a time range,
  against ``GET /api/audit`` with the same filters and page size;
- the recipients page (``/console/recipients``, first and last page) and one recipient's
  page, the shares page (``/console/shares``, first and last page), one share's page and
  a table's settings, against the provider API's ``GET /api/2.1/unity-catalog/recipients``
  and ``.../shares`` (and ``.../{name}``), timed only when the console has them (a page
  that answers 404 is left out and said so);
- the shared tables, the confirmations asked before revoking a grant, dropping a share
  and deleting a recipient, and the overview (no list call stands for them: their time
  alone).

Each pair is asked in turn, which goes first alternating, :data:`ROUNDS` times after one
warm-up; the figures are medians, a ratio is the page's median over the call's (target:
within 3x), and every page must be under :data:`PAGE_TARGET_MS`.

Run: ``uv run --frozen python benchmarks/bench_console_pages.py`` (about two minutes, most
of it writing the records).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import httpx
import yaml
from bench_server import free_port, serving

from deltaport.admin.unity.paging import page_token
from deltaport.catalog.rows import TableSpec
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.observe.audit_record import QUERIED_TABLE, AuditRecord, iso_time
from deltaport.observe.audit_store import write

N_SHARES = 1_000
N_RECIPIENTS = 10_000
N_RECORDS = 1_000_000
ROUNDS = 11
PAGE_TARGET_MS = 300
RATIO_TARGET = 3.0
ADMIN_TOKEN = "bench-admin-token-0123456789"
UNITY = "/api/2.1/unity-catalog"
DAY_MS = 86_400_000
TABLE = "/console/shares/s0424/schemas/d/tables/t"
GRANT = "/console/recipients/r04242/grants/s0242"


def fill(catalog: SqlCatalog, location: str) -> int:
    """The shares, recipients and records; returns the time of the newest record."""
    with catalog.batch():
        for i in range(N_SHARES):
            catalog.create_share(f"s{i:04}")
            catalog.add_table(f"s{i:04}", "d", "t", TableSpec(location))
        for i in range(N_RECIPIENTS):
            catalog.create_recipient(f"r{i:05}", expires_in=timedelta(days=1 + i % 60))
            catalog.grant(f"s{i % N_SHARES:04}", f"r{i:05}")
    now = int(time.time() * 1000)
    step = 30 * DAY_MS // N_RECORDS
    batch = []
    for i in range(N_RECORDS):
        batch.append(
            AuditRecord(
                time_ms=now - (N_RECORDS - i) * step,
                operation=QUERIED_TABLE,
                status=404 if i % 97 == 0 else 200,
                duration_ms=3,
                recipient=f"r{i % 100:05}",
                client_address="10.0.0.1",
                share=f"s{i % 1000:04}",
                table=f"s{i % 1000:04}.d.t",
                version=i % 50,
                files=2,
                bytes=4096,
            )
        )
        if len(batch) == 50_000:
            write(catalog.database, batch)
            batch = []
    return now


def pairs(now: int) -> dict[str, tuple[str, str | None]]:
    """Each page and the list call it is measured against (None: none)."""
    day = f"since={iso_time(now - DAY_MS)}&until={iso_time(now - DAY_MS // 2)}"
    return {
        "audit, first page": ("/console/audit", "/api/audit?limit=50"),
        "audit, by recipient": (
            "/console/audit?recipient=r00042",
            "/api/audit?recipient=r00042&limit=50",
        ),
        "audit, by table": (
            "/console/audit?table=s0042.d.t",
            "/api/audit?table=s0042.d.t&limit=50",
        ),
        "audit, a time range": (f"/console/audit?{day}", f"/api/audit?{day}&limit=50"),
        "recipients, first page": ("/console/recipients", f"{UNITY}/recipients"),
        "recipients, last page": (
            "/console/recipients?offset=9900",
            f"{UNITY}/recipients?page_token={page_token('r09899')}",
        ),
        "one recipient": ("/console/recipients/r04242", f"{UNITY}/recipients/r04242"),
        "shares, first page": ("/console/shares", f"{UNITY}/shares"),
        "shares, last page": (
            "/console/shares?offset=900",
            f"{UNITY}/shares?page_token={page_token('s0899')}",
        ),
        "one share": ("/console/shares/s0424", f"{UNITY}/shares/s0424"),
        "a table's settings": (f"{TABLE}/edit", f"{UNITY}/shares/s0424"),
        "tables": ("/console/tables", None),
        "revoke a grant, asked": (f"{GRANT}/revoke", None),
        "drop a share, asked": ("/console/shares/s0424/drop", None),
        "delete recipient, asked": ("/console/recipients/r04242/delete", None),
        "overview": ("/console/", None),
    }


def timed(client: httpx.Client, url: str) -> float:
    began = time.perf_counter()
    response = client.get(url)
    elapsed = time.perf_counter() - began
    response.raise_for_status()
    return elapsed


def signed_in(base: str) -> httpx.Client:
    console = httpx.Client(base_url=base, timeout=300)
    console.get("/console/login")
    csrf = console.cookies["deltaport_login_csrf"]
    console.post("/console/login", data={"csrf": csrf, "token": ADMIN_TOKEN})
    return console


def measure(base: str, now: int) -> None:
    console = signed_in(base)
    api = httpx.Client(
        base_url=base, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=300
    )
    print(f"{N_SHARES:,} shares, {N_RECIPIENTS:,} recipients, {N_RECORDS:,} audit records")
    print(f"medians of {ROUNDS} rounds, page and call alternating which goes first")
    print(f"{'page':<24}{'page (ms)':>11}{'call (ms)':>11}{'ratio':>8}")
    failed = []
    for name, (page, call) in pairs(now).items():
        if console.get(page).status_code == 404:
            print(f"{name:<24}{'(no such page on this branch: not timed)':>30}")
            continue
        if call is not None:
            timed(api, call)
        pages: list[float] = []
        calls: list[float] = []
        for round_ in range(ROUNDS):
            if call is not None and round_ % 2:
                calls.append(timed(api, call))
            pages.append(timed(console, page))
            if call is not None and not round_ % 2:
                calls.append(timed(api, call))
        page_ms = statistics.median(pages) * 1000
        if call is None:
            print(f"{name:<24}{page_ms:>11.1f}{'-':>11}{'-':>8}")
            ratio = 0.0
        else:
            call_ms = statistics.median(calls) * 1000
            ratio = page_ms / call_ms
            print(f"{name:<24}{page_ms:>11.1f}{call_ms:>11.1f}{ratio:>7.2f}x")
        if page_ms > PAGE_TARGET_MS or ratio > RATIO_TARGET:
            failed.append(name)
    print(
        f"targets (each page under {PAGE_TARGET_MS} ms, within {RATIO_TARGET:.0f}x): "
        + ("met" if not failed else "missed by " + ", ".join(failed))
    )


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        url = f"sqlite:///{tmp}/catalog.db"
        began = time.perf_counter()
        now = fill(SqlCatalog(url), str(tmp / "nowhere"))
        print(f"catalog written in {time.perf_counter() - began:.0f} s")
        port, admin_port = free_port(), free_port()
        config = tmp / "server.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    "accessLog": False,
                    "signingKey": "bench",
                    "admin": {"port": admin_port, "tokens": [ADMIN_TOKEN]},
                }
            )
        )
        command = [str(Path(sys.executable).parent / "deltaport"), "serve", "--config", str(config)]
        command += ["--catalog", url, "--host", "127.0.0.1", "--port", str(port)]
        with serving(command, admin_port, "/api/openapi.json"):
            measure(f"http://127.0.0.1:{admin_port}", now)


if __name__ == "__main__":
    main()
