"""Nobody can fill the disk through the audit log of a real ``deltaport serve --catalog``
process: 10,000 requests without a token on paths of about 63 KB, and 2,000 more on a
short path (401, then 429 past the failed-authentication limit), grow the catalog database
and the JSON lines file by a few kilobytes, measured on disk after a clean stop (the
database's write-ahead log checkpointed into it)."""

from __future__ import annotations

import socket
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from deltaport.cli import main
from sharing_server import RunningServer, start_server, stop_server

REQUESTS = 10_000
SHORT_REQUESTS = 2_000
SEGMENT = "A" * 21_000
LONG_PATH = f"/delta-sharing/shares/{SEGMENT}/schemas/{SEGMENT}/tables/{SEGMENT}/metadata"
SHORT_PATH = "/delta-sharing/shares/sales/schemas/eu/tables/orders/metadata"
GROWTH_BOUND = 16 * 1024
"""Bytes each of the database and the JSON lines may grow by, both storms together."""


def _start(catalog: str, tmp: Path) -> RunningServer:
    config = {"signingKey": "storm-key", "audit": {"jsonLines": str(tmp / "audit.jsonl")}}
    return start_server(config, tmp, catalog=catalog)


def _stored_bytes(tmp: Path) -> dict[str, int]:
    """The sizes of the database (every page written to it) and of the JSON lines."""
    with sqlite3.connect(tmp / "catalog.db") as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    database = (tmp / "catalog.db").stat().st_size
    lines = tmp / "audit.jsonl"
    return {"database": database, "lines": lines.stat().st_size if lines.exists() else 0}


def _long_path_status(port: int) -> bytes:
    """The status line of a GET of :data:`LONG_PATH` without a token (one connection)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        connection.sendall(f"GET {LONG_PATH} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        answer = b""
        while b"\r\n\r\n" not in answer or b'"}' not in answer:
            chunk = connection.recv(65536)
            if not chunk:
                break
            answer += chunk
    return answer


def _short_path_statuses(base: str, n: int) -> list[int]:
    with httpx.Client(base_url=base, timeout=30) as client:
        return [client.get(SHORT_PATH).status_code for _ in range(n)]


def test_a_storm_of_refused_requests_adds_a_few_kilobytes(tmp_path: Path) -> None:
    catalog = f"sqlite:///{tmp_path}/catalog.db"
    main(["catalog", "init", "--catalog", catalog])
    stop_server(_start(catalog, tmp_path))  # the schema migrated, the files at rest
    before = _stored_bytes(tmp_path)

    server = _start(catalog, tmp_path)
    try:
        port = int(server.base.rsplit(":", 1)[1])
        with ThreadPoolExecutor(2) as pool:
            answers = list(pool.map(lambda _: _long_path_status(port), range(REQUESTS)))
            halves = pool.map(
                lambda n: _short_path_statuses(server.base, n), [SHORT_REQUESTS // 2] * 2
            )
            shorts = [status for half in halves for status in half]
        assert all(a.startswith(b"HTTP/1.1 414 ") for a in answers), answers[0][:200]
        assert all(b"REQUEST_PATH_TOO_LONG" in a for a in answers), answers[0][-200:]
        assert set(shorts) == {401, 429}
        assert len(shorts) == SHORT_REQUESTS
    finally:
        stop_server(server)
    assert server.process.returncode == 0, server.log()

    after = _stored_bytes(tmp_path)
    growth = {kind: after[kind] - before[kind] for kind in before}
    assert growth["database"] <= GROWTH_BOUND, growth
    assert growth["lines"] <= GROWTH_BOUND, growth
    with sqlite3.connect(tmp_path / "catalog.db") as db:
        rows = db.execute(
            "SELECT operation, status, request_count, length(share), client_address "
            "FROM audit_records"
        ).fetchall()
    # no record of a path refused before any route; the short storm: the first refusals
    # whole, the rest counted in one summary per status
    assert sum(count or 1 for _, _, count, _, _ in rows) == SHORT_REQUESTS
    assert len(rows) <= 10 + 2, rows
    assert {address for *_, address in rows} == {"127.0.0.1"}
    summaries = {status: count for operation, status, count, _, _ in rows if count}
    assert set(summaries) <= {401, 429} and 429 in summaries
