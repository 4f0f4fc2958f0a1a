"""A server whose catalog database goes away: PostgreSQL restarted and paused (SIGSTOP),
SQLite's write lock held by another process. Other requests keep being answered from
memory while it is away (counted, not timed), past ``catalogMaxStaleSeconds`` the server
answers 503, and a revocation made once the database is back takes effect within the
documented bound (docs/server/operating.md, "When the catalog database is away")."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pyarrow as pa
import pytest
from deltalake import write_deltalake

from admin_support import start_with_admin
from deltaport.catalog.database import connection
from deltaport.catalog.database.connection import Database, DatabaseUnavailableError
from deltaport.catalog.live.live_catalog import POLL_SECONDS, RETRY_MAX_SECONDS
from deltaport.catalog.rows import TableSpec
from deltaport.catalog.sql_store import SqlCatalog
from postgres import PostgresCluster, new_database
from sharing_server import RunningServer, stop_server
from waiting import wait_until

ADMIN_TOKEN = "outage-admin-token-2d8f"
RECOVERY_SECONDS = RETRY_MAX_SECONDS + POLL_SECONDS
"""The documented bound: once the database answers again, a change reaches the server
within the longest retry delay plus one poll."""
SLACK_SECONDS = 5
"""Added to every bound for a loaded two-core machine; a server that never recovers or
never refuses still fails."""
STALE_SECONDS = 8
"""Long enough that stopping PostgreSQL (which the test waits for) never outlasts it."""
PAUSE_SECONDS = 8
HOLDER = """
import sqlite3, sys
from deltaport.catalog.database.connection import sqlite_path
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.catalog.rows import TableSpec

url = sys.argv[1]
SqlCatalog(url).revoke("a")  # committed: the server has something to reload
db = sqlite3.connect(sqlite_path(url), isolation_level=None)
db.execute("BEGIN IMMEDIATE")
db.execute("UPDATE deltaport_meta SET value = value WHERE key = 'generation'")
print("held", flush=True)
sys.stdin.readline()  # until the test says so
db.execute("ROLLBACK")
"""


@pytest.fixture(scope="module")
def cluster() -> Iterator[PostgresCluster]:
    """A cluster of this module's own: its tests stop and pause it."""
    running = PostgresCluster()
    running.start()
    yield running
    running.remove()


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("outage") / "t"
    write_deltalake(str(path), pa.table({"id": [1, 2, 3]}))
    return path


def _seed(url: str, table: Path) -> dict[str, str]:
    """Share s with one table, granted to recipients a and b; their tokens."""
    store = SqlCatalog(url)
    store.create_share("s")
    store.add_table("s", "sc", "t", TableSpec(str(table)))
    tokens = {}
    for name in ("a", "b"):
        tokens[name] = store.create_recipient(name).token
        store.grant("s", name)
    store.database.close()
    return tokens


def _start(url: str, tmp: Path, **settings: object) -> tuple[RunningServer, httpx.Client]:
    """A server on ``url`` with its admin listener, and an admin API client."""
    running = start_with_admin(
        {"catalog": url, "signingKey": "outage-key", **settings}, tmp, ADMIN_TOKEN
    )
    return running.sharing, running.api(ADMIN_TOKEN)


def _clients(server: RunningServer, tokens: dict[str, str]) -> dict[str, httpx.Client]:
    return {name: server.client(token) for name, token in tokens.items()}


def _within(seconds: float, what: str, done: Callable[[], bool]) -> None:
    wait_until(done, seconds, what, interval=0.05)


def _shares(client: httpx.Client) -> int:
    return client.get("/shares").status_code


def _readiness(server: RunningServer, api: httpx.Client) -> set[int]:
    """The statuses of ``/readyz`` on the sharing and the admin listener (no token)."""
    return {
        httpx.get(server.base + "/readyz").status_code,
        httpx.get(str(api.base_url).rstrip("/") + "/readyz").status_code,
    }


def _file_url(client: httpx.Client) -> str:
    """The URL of the table's one file, as ``/query`` hands it out."""
    answer = client.post("/shares/s/schemas/sc/tables/t/query", json={})
    assert answer.status_code == 200, answer.text
    lines = [json.loads(line) for line in answer.text.splitlines()]
    return str(next(line["file"]["url"] for line in lines if "file" in line))


@pytest.mark.parametrize("stop", ["fast", "immediate"])  # immediate: a crash, then recovery
def test_a_postgresql_restart_is_served_from_memory_then_503_then_reconnected(
    cluster: PostgresCluster, table: Path, tmp_path: Path, stop: str
) -> None:
    url = new_database(cluster.url)
    tokens = _seed(url, table)
    server, api = _start(url, tmp_path, catalogMaxStaleSeconds=STALE_SECONDS)
    clients = _clients(server, tokens)
    try:
        assert _shares(clients["a"]) == _shares(clients["b"]) == 200
        assert _readiness(server, api) == {200}
        file_url = _file_url(clients["b"])
        cluster.stop(stop)
        assert httpx.get(file_url).status_code == 200
        answers: list[httpx.Response] = []

        def refused() -> bool:
            answers.append(clients["b"].get("/shares"))
            return answers[-1].status_code == 503

        _within(STALE_SECONDS + SLACK_SECONDS, "503 past catalogMaxStaleSeconds", refused)
        assert answers[0].status_code == 200  # served from memory first
        assert {r.status_code for r in answers} == {200, 503}
        assert answers[-1].json()["errorCode"] == "TEMPORARILY_UNAVAILABLE"
        assert _readiness(server, api) == {503}
        file_answer = httpx.get(file_url)
        assert file_answer.status_code == 503
        assert file_answer.json()["errorCode"] == "TEMPORARILY_UNAVAILABLE"
        unwritten = api.post("/api/recipients/a/revoke")
        assert unwritten.status_code == 503
        assert unwritten.json()["errorCode"] == "TEMPORARILY_UNAVAILABLE"

        cluster.start()
        assert api.post("/api/recipients/a/revoke").status_code == 204  # reconnected
        _within(
            RECOVERY_SECONDS + SLACK_SECONDS,
            "the revocation takes effect",
            lambda: _shares(clients["a"]) == 401,
        )
        assert _shares(clients["b"]) == 200
        assert _readiness(server, api) == {200}
        assert httpx.get(file_url).status_code == 200
        assert server.log().count("the catalog could not be read") == 1  # not every second
        assert server.log().count("the catalog can be read again") == 1
    finally:
        cluster.start()
        stop_server(server)


def test_a_paused_postgresql_does_not_hold_up_requests(
    cluster: PostgresCluster, table: Path, tmp_path: Path
) -> None:
    url = new_database(cluster.url)
    tokens = _seed(url, table)
    server, _ = _start(url, tmp_path)  # catalogMaxStaleSeconds (30) outlasts the pause
    clients = _clients(server, tokens)
    resumed = threading.Event()

    def resume() -> None:
        resumed.set()  # first: a request the pause held up must not count as answered
        cluster.resume()

    timer = threading.Timer(PAUSE_SECONDS, resume)
    try:
        assert _shares(clients["b"]) == 200
        cluster.pause()
        timer.start()
        time.sleep(2 * POLL_SECONDS)  # the server's poll is now waiting on the stopped backend
        answered_while_paused = 0
        while not resumed.is_set():
            assert _shares(clients["b"]) == 200
            answered_while_paused += not resumed.is_set()
        assert answered_while_paused >= 10

        SqlCatalog(url).revoke("a")
        _within(
            RECOVERY_SECONDS + SLACK_SECONDS,
            "the revocation takes effect",
            lambda: _shares(clients["a"]) == 401,
        )
        assert _shares(clients["b"]) == 200
    finally:
        timer.cancel()
        resume()
        stop_server(server)


def test_a_held_sqlite_write_lock_does_not_hold_up_requests(table: Path, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/catalog.db"
    tokens = _seed(url, table)
    # the revoked recipient asks again and again from the same address as the other: the
    # failed-authentication limit would soon answer both 429 (see rateLimits)
    limits = {"failedAuthLimit": 1_000_000}
    server, _ = _start(url, tmp_path / "server", rateLimits=limits)
    clients = _clients(server, tokens)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    released = threading.Event()

    def release() -> None:
        released.set()  # first: a request the lock held up must not count as answered
        if holder.poll() is None:
            assert holder.stdin is not None
            holder.stdin.write("release\n")
            holder.stdin.flush()

    timer = threading.Timer(PAUSE_SECONDS, release)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        timer.start()
        time.sleep(2 * POLL_SECONDS)  # the server has seen the revocation's generation
        answered_while_held = 0
        a_refused_while_held = False
        while not released.is_set():
            assert _shares(clients["b"]) == 200
            a_refused = _shares(clients["a"]) == 401
            if not released.is_set():
                answered_while_held += 1
                a_refused_while_held |= a_refused
        assert holder.wait(30) == 0
        assert answered_while_held >= 10
        assert a_refused_while_held  # the reload read past the lock
    finally:
        timer.cancel()
        release()
        holder.wait(30)
        stop_server(server)


def test_a_stopped_backend_is_cut_off_and_its_connection_replaced(
    cluster: PostgresCluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = Database(new_database(cluster.url))
    backend = db.query("SELECT pg_backend_pid()")[0][0]
    monkeypatch.setattr(connection, "STALLED_SECONDS", 1)
    os.kill(backend, signal.SIGSTOP)  # its own statement timeout can never fire
    try:
        with pytest.raises(DatabaseUnavailableError):
            db.query("SELECT 1")
        assert db.query("SELECT pg_backend_pid()")[0][0] != backend  # a new connection
    finally:
        os.kill(backend, signal.SIGCONT)


def test_sqlite_reads_pass_a_held_write_lock_and_writes_give_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path}/catalog.db"
    SqlCatalog(url).create_share("s")
    db = Database(url)
    holder = sqlite3.connect(tmp_path / "catalog.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("DELETE FROM shares")
    monkeypatch.setattr(connection, "STALLED_SECONDS", 1)
    try:
        with db.read() as tx:
            assert tx.execute("SELECT name FROM shares") == [("s",)]  # the last commit
        with pytest.raises(DatabaseUnavailableError), db.transaction() as tx:
            tx.execute("DELETE FROM shares")
    finally:
        holder.execute("ROLLBACK")
    with db.transaction() as tx:
        tx.execute("DELETE FROM shares")
    assert db.query("SELECT name FROM shares") == []
