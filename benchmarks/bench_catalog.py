"""Request rates of a server on a catalog of 10,000 recipients and 1,000 shares, against the
YAML single-token server on the same table, measured in turn in one run.

Builds one small local table (10 files), a YAML configuration sharing it with one bearer
token, and a SQLite catalog with 1,000 shares (each holding the table) and 10,000
recipients (each granted one share, with a ``region`` property), then measures
``GET /shares`` and ``POST .../query`` requests per second on each server with
``CONCURRENCY`` keep-alive connections, alternating the two servers over ``ROUNDS`` rounds
and printing the medians and their ratio (catalog / YAML; target at least 0.8).

Run: ``uv run python benchmarks/bench_catalog.py`` (about two minutes).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
from bench_server import deltaport_serving, free_port
from deltalake import write_deltalake

from deltaport.catalog.sql_store import SqlCatalog

RECIPIENTS = 10_000
SHARES = 1_000
ROUNDS = 3
LOAD_SECONDS = 3.0
CONCURRENCY = 8
YAML_TOKEN = "bench-yaml-token"


async def _read_answer(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    lowered = head.lower()
    if b"transfer-encoding: chunked" in lowered:
        while True:
            size = int((await reader.readuntil(b"\r\n")).strip(), 16)
            await reader.readexactly(size + 2)
            if size == 0:
                break
    else:
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                await reader.readexactly(int(line.split(b":")[1]))
    if not head.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(f"unexpected answer: {head[:80]!r}")
    return head


async def _client(port: int, request: bytes, stop_at: float, counts: list[int]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    done = 0
    try:
        while time.perf_counter() < stop_at:
            writer.write(request)
            await _read_answer(reader)
            done += 1
    finally:
        writer.close()
        counts.append(done)


def rate(port: int, method: str, path: str, token: str, body: bytes = b"") -> float:
    extra = f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n" if body else ""
    request = (
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
        f"{extra}\r\n"
    ).encode() + body

    async def run() -> float:
        warm: list[int] = []
        await asyncio.gather(
            *(_client(port, request, time.perf_counter() + 0.5, warm) for _ in range(CONCURRENCY))
        )
        counts: list[int] = []
        start = time.perf_counter()
        stop_at = start + LOAD_SECONDS
        await asyncio.gather(*(_client(port, request, stop_at, counts) for _ in range(CONCURRENCY)))
        return sum(counts) / (time.perf_counter() - start)

    return asyncio.run(run())


def build(tmp: Path) -> tuple[Path, Path, str]:
    table = tmp / "table"
    for i in range(10):
        rows = pa.table({"id": list(range(i * 100, i * 100 + 100)), "region": ["eu"] * 100})
        write_deltalake(str(table), rows, mode="append")
    yaml_config = tmp / "yaml.json"
    yaml_config.write_text(
        json.dumps(
            {
                "authorization": {"bearerToken": YAML_TOKEN},
                "shares": [
                    {
                        "name": "share0",
                        "schemas": [
                            {"name": "s", "tables": [{"name": "t", "location": str(table)}]}
                        ],
                    }
                ],
            }
        )
    )
    url = f"sqlite:///{tmp}/catalog.db"
    started = time.perf_counter()
    store = SqlCatalog(url)
    for i in range(SHARES):
        store.create_share(f"share{i}")
        store.add_table(f"share{i}", "s", "t", str(table))
    token = ""
    for i in range(RECIPIENTS):
        issued = store.create_recipient(f"r{i}", {"region": "eu"})
        store.grant(f"share{i % SHARES}", f"r{i}")
        if i == 0:
            token = issued.token
    print(
        f"catalog of {SHARES} shares and {RECIPIENTS} recipients built in "
        f"{time.perf_counter() - started:.1f} s"
    )
    catalog_config = tmp / "catalog.json"
    catalog_config.write_text(json.dumps({"catalog": url}))
    return yaml_config, catalog_config, token


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="deltaport-bench-") as folder:
        tmp = Path(folder)
        yaml_config, catalog_config, token = build(tmp)
        query = "/delta-sharing/shares/share0/schemas/s/tables/t/query"
        results: dict[tuple[str, str], list[float]] = {}
        for _ in range(ROUNDS):
            for kind, config, bearer in (
                ("yaml", yaml_config, YAML_TOKEN),
                ("catalog", catalog_config, token),
            ):
                port = free_port()
                with deltaport_serving(config, port):
                    shares = rate(port, "GET", "/delta-sharing/shares", bearer)
                    answers = rate(port, "POST", query, bearer, b"{}")
                results.setdefault((kind, "/shares"), []).append(shares)
                results.setdefault((kind, "/query"), []).append(answers)
        for route in ("/shares", "/query"):
            yaml_rate = statistics.median(results[("yaml", route)])
            catalog_rate = statistics.median(results[("catalog", route)])
            ratio = catalog_rate / yaml_rate
            verdict = "met" if ratio >= 0.8 else "MISSED"
            print(
                f"{route}: catalog {catalog_rate:,.0f} req/s, YAML {yaml_rate:,.0f} req/s, "
                f"ratio {ratio:.2f} (target >= 0.8: {verdict})"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
