"""A PostgreSQL catalog restarted under a running server, and absent when a server starts.

After ``pg_ctl restart`` every connection a process held is dead, which it learns only on
its next statement: the first write through each front door (admin API, provider API,
console) is still answered, on a new connection; a write that fails after its first
statement is never made twice. A server started while the database is down waits for it
within ``catalogStartupWaitSeconds``, one log line an attempt, then exits with one
``deltaport: error:`` line naming the database without its password."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest
import yaml

from admin_support import start_with_admin
from deltaport.catalog.database.connection import Database, DatabaseUnavailableError
from deltaport.catalog.sql_store import SqlCatalog
from postgres import PostgresCluster, new_database
from sharing_server import free_port, stop_server
from waiting import wait_until

ADMIN_TOKEN = "restart-admin-token-71c4"
UC = "/api/2.1/unity-catalog"
PASSWORD = "pw-never-shown-5e1a"


@pytest.fixture(scope="module")
def cluster() -> Iterator[PostgresCluster]:
    """A cluster of this module's own: its tests restart and stop it."""
    running = PostgresCluster()
    running.start()
    yield running
    running.remove()


def _restart(cluster: PostgresCluster) -> None:
    """``pg_ctl restart -m fast``: returns once the database accepts connections again."""
    cluster.stop("fast")
    cluster.start()


def _backend(db: Database) -> int:
    return int(db.query("SELECT pg_backend_pid()")[0][0])


def test_each_kind_of_unit_after_a_restart_runs_on_a_new_connection(
    cluster: PostgresCluster,
) -> None:
    db = Database(new_database(cluster.url))
    with db.transaction() as tx:
        tx.execute("CREATE TABLE t (n BIGINT)")
    for unit in ("transaction", "read", "query"):
        before = _backend(db)
        _restart(cluster)
        if unit == "transaction":
            with db.transaction() as tx:
                tx.execute("INSERT INTO t VALUES (1)")
        elif unit == "read":
            with db.read() as tx:
                assert tx.execute("SELECT COUNT(*) FROM t") == [(1,)]
        else:
            assert db.query("SELECT COUNT(*) FROM t") == [(1,)]
        assert _backend(db) != before, unit
    assert db.query("SELECT n FROM t") == [(1,)]  # the write made once


def test_a_write_that_fails_after_its_first_statement_is_not_made_again(
    cluster: PostgresCluster,
) -> None:
    url = new_database(cluster.url)
    db = Database(url)
    with db.transaction() as tx:
        tx.execute("CREATE TABLE t (n BIGINT)")
    bodies = 0
    with pytest.raises(DatabaseUnavailableError), db.transaction() as tx:
        bodies += 1
        tx.execute("INSERT INTO t VALUES (1)")
        backend = tx.execute("SELECT pg_backend_pid()")[0][0]
        with psycopg.connect(url, autocommit=True) as other:
            other.execute("SELECT pg_terminate_backend(%s)", (backend,))
        tx.execute("INSERT INTO t VALUES (2)")
    assert bodies == 1
    assert db.query("SELECT n FROM t") == []  # nothing of it kept


def _admin_server(url: str, tmp: Path) -> tuple[object, httpx.Client]:
    store = SqlCatalog(url)
    store.database.close()
    running = start_with_admin({"catalog": url, "signingKey": "restart-key"}, tmp, ADMIN_TOKEN)
    return running.sharing, running.api(ADMIN_TOKEN)


def _console(base: str) -> tuple[httpx.Client, str]:
    """A client signed in to the console, and its session's form token."""
    console = httpx.Client(base_url=base, timeout=60)
    console.get("/console/login")
    login = {"csrf": console.cookies.get("deltaport_login_csrf"), "token": ADMIN_TOKEN}
    assert console.post("/console/login", data=login).status_code == 303
    found = re.search(r'name="csrf" value="([^"]+)"', console.get("/console/shares").text)
    assert found is not None
    return console, found.group(1)


def test_the_first_write_after_a_restart_is_answered_on_every_front_door(
    cluster: PostgresCluster, tmp_path: Path
) -> None:
    server, api = _admin_server(new_database(cluster.url), tmp_path)
    try:
        console, csrf = _console(str(api.base_url))
        assert api.post("/api/shares", json={"name": "warm"}).status_code == 201
        _restart(cluster)
        created = api.post("/api/shares", json={"name": "admin_api"})
        assert created.status_code == 201, created.text
        _restart(cluster)
        created = api.post(f"{UC}/shares", json={"name": "provider_api"})
        assert created.status_code == 200, created.text
        _restart(cluster)
        created = console.post("/console/shares", data={"csrf": csrf, "name": "console"})
        assert created.status_code == 303, created.text
        listed = api.get("/api/catalog").json()
        names = sorted(share["name"] for share in listed["shares"])
        assert names == ["admin_api", "console", "provider_api", "warm"]
    finally:
        stop_server(server)  # type: ignore[arg-type]


def _serve(config: dict[str, object], tmp: Path) -> subprocess.Popen[str]:
    path = tmp / "server.yaml"
    path.write_text(yaml.safe_dump(config))
    command = [sys.executable, "-m", "deltaport.server", "--config", str(path)]
    return subprocess.Popen(
        [*command, "--host", "127.0.0.1", "--port", str(free_port())],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _with_password(url: str) -> str:
    return url.replace("@127.0.0.1", f":{PASSWORD}@127.0.0.1")


def test_a_server_started_while_the_database_is_down_exits_with_one_error_line(
    cluster: PostgresCluster, tmp_path: Path
) -> None:
    url = new_database(cluster.url)
    SqlCatalog(url).database.close()
    cluster.stop("fast")
    try:
        config = {
            "catalog": _with_password(url),
            "signingKey": "k",
            "catalogStartupWaitSeconds": 3,
        }
        process = _serve(config, tmp_path)
        out, err = process.communicate(timeout=60)
    finally:
        cluster.start()
    assert process.returncode == 1, err
    assert "Traceback" not in err
    assert PASSWORD not in out + err
    errors = [line for line in err.splitlines() if line.startswith("deltaport:")]
    assert len(errors) == 1, err
    assert errors[0].startswith("deltaport: error: the catalog database ")
    assert url.rpartition("/")[2] in errors[0]  # names the database
    attempts = re.findall(r"cannot be reached \(attempt (\d+)\)", err)
    assert attempts and attempts == [str(n) for n in range(1, len(attempts) + 1)]


def test_a_server_started_while_the_database_is_down_serves_once_it_is_up(
    cluster: PostgresCluster, tmp_path: Path
) -> None:
    url = new_database(cluster.url)
    SqlCatalog(url).database.close()
    cluster.stop("fast")
    config = {"catalog": url, "signingKey": "k", "catalogStartupWaitSeconds": 120}
    tmp_path.mkdir(exist_ok=True)
    process = None
    try:
        (tmp_path / "server.yaml").write_text(yaml.safe_dump(config))
        log = tmp_path / "server.log"
        port = free_port()
        with log.open("w") as out:
            config_file = str(tmp_path / "server.yaml")
            where = ["--host", "127.0.0.1", "--port", str(port)]
            process = subprocess.Popen(
                [sys.executable, "-m", "deltaport.server", "-c", config_file, *where],
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        running = process

        def retried() -> bool:
            assert running.poll() is None, log.read_text()
            return "(attempt 2)" in log.read_text()

        def ready() -> bool:
            assert running.poll() is None, log.read_text()
            return httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200

        wait_until(retried, 60, "a second attempt in the log", details=log.read_text)
        cluster.start()
        wait_until(
            ready, 60, "the server to be ready", ignore=(httpx.HTTPError,), details=log.read_text
        )
        assert "Traceback" not in log.read_text()
    finally:
        cluster.start()
        if process is not None:
            process.terminate()
            process.wait(30)
