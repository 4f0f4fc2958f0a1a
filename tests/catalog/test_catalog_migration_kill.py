"""``kill -9`` of a process upgrading the catalog database, on SQLite and on PostgreSQL.

A catalog at schema version 2 (the second release's), holding shares, tables, recipients,
tokens and grants, is upgraded by ``deltaport share list`` (any command or server start
upgrades it first), and that process is killed with ``SIGKILL`` at several points: spread
over the time a whole upgrade takes (migration 3 walks every recipient's tokens, so the
upgrade takes a while on a catalog of a few thousand recipients), and as soon as the test
sees each version committed. Whatever point was hit (docs/reliability.md, "Faults"): the
database is at one schema version and holds exactly that version's schema, nothing of the
next; the next start finishes the upgrade (a server's after the first kill, which then
serves a token minted before; after the others, the catalog opened in the test's process);
and no share, table, recipient, token or grant is lost, duplicated or changed.
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from deltaport.catalog.database.connection import Database, sqlite_path
from deltaport.catalog.database.migrations import MIGRATIONS, SCHEMA_VERSION
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.catalog.tokens import token_hash
from postgres import new_database, postgres_server  # noqa: F401
from sharing_server import start_server, stop_server

START_VERSION = 2
RECIPIENTS = 3000
"""Enough recipients (one token each) for migration 3 to take a while."""
SPREAD_KILLS = 4
"""Kills spread evenly over the time one whole upgrade takes."""
DATA = {
    "shares": "SELECT name_key, name, id, comment, created_at FROM shares",
    "shared_tables": "SELECT name_key, share_key, schema_name, name, location, id, "
    "history_shared, start_version, partition_filter, ordinal, access_modes, "
    "auxiliary_locations FROM shared_tables",
    "recipients": "SELECT name_key, name, properties, created_at FROM recipients",
    "tokens": "SELECT hash, recipient_key, created_at, expires_at, revoked_at FROM tokens",
    "grants": "SELECT share_key, recipient_key, created_at FROM grants",
}
"""Every row a catalog at version 2 holds (the columns of version 2)."""


def _migrate_to(database: Database, version: int) -> None:
    """The first ``version`` migrations, as an older deltaport applied them."""
    for number, step in enumerate(MIGRATIONS[:version], start=1):
        with database.transaction() as tx:
            for statement in step(database.kind) if callable(step) else step:
                tx.execute(statement)
            if number == 1:
                for key, value in (("generation", "0"), ("token_key", "ab" * 32)):
                    tx.execute(
                        "INSERT INTO deltaport_meta (key, value) VALUES (?, ?)", (key, value)
                    )
                tx.execute("INSERT INTO deltaport_meta (key, value) VALUES ('schema_version', '0')")
            tx.execute(
                "UPDATE deltaport_meta SET value = ? WHERE key = 'schema_version'", (str(number),)
            )


def _seed(database: Database, table: Path) -> str:
    """Shares, a table, recipients with tokens (lifetimes of 1 to 9 hours) and grants, as
    version 2 held them; returns recipient r0's token."""
    key = bytes.fromhex("ab" * 32)
    tokens = [f"token-{n}-{uuid.uuid4().hex}" for n in range(RECIPIENTS)]
    created = int(time.time() * 1000)
    with database.transaction() as tx:
        tx.execute_many(
            "INSERT INTO shares (name_key, name, id, comment, created_at) VALUES (?,?,?,?,?)",
            [(f"s{n}", f"S{n}", str(uuid.uuid4()), f"share {n}", created) for n in range(3)],
        )
        tx.execute(
            "INSERT INTO shared_tables (name_key, share_key, schema_name, name, location, id, "
            "history_shared, start_version, partition_filter, ordinal) "
            "VALUES ('s0.sc.t', 's0', 'sc', 't', ?, ?, 1, 0, NULL, 1)",
            (str(table), str(uuid.uuid4())),
        )
        tx.execute_many(
            "INSERT INTO recipients (name_key, name, properties, created_at) VALUES (?,?,?,?)",
            [(f"r{n}", f"R{n}", f'{{"n": "{n}"}}', created) for n in range(RECIPIENTS)],
        )
        tx.execute_many(
            "INSERT INTO tokens (hash, recipient_key, created_at, expires_at) VALUES (?,?,?,?)",
            [
                (token_hash(key, t), f"r{n}", created, created + (n % 9 + 1) * 3_600_000)
                for n, t in enumerate(tokens)
            ],
        )
        tx.execute_many(
            "INSERT INTO grants (share_key, recipient_key, created_at) VALUES (?,?,?)",
            [(f"s{n % 3}", f"r{n}", created) for n in range(RECIPIENTS)],
        )
    return tokens[0]


def _version(database: Database) -> int:
    rows = database.query("SELECT value FROM deltaport_meta WHERE key = 'schema_version'")
    return int(rows[0][0])


def _schema(database: Database) -> set[tuple[str, ...]]:
    """Every table, column, index and trigger of the database."""
    if database.kind == "sqlite":
        found: set[tuple[str, ...]] = set()
        for kind, name, table in database.query(
            "SELECT type, name, tbl_name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
        ):
            found.add((kind, name, table))
            if kind == "table":
                for column in database.query(f"PRAGMA table_info({name})"):
                    found.add(("column", name, column[1], column[2], str(column[4])))
        return found
    columns = database.query(
        "SELECT table_name, column_name, data_type, COALESCE(column_default, '') "
        "FROM information_schema.columns WHERE table_schema = current_schema()"
    )
    indexes = database.query(
        "SELECT tablename, indexname FROM pg_indexes WHERE schemaname = current_schema()"
    )
    triggers = database.query(
        "SELECT event_object_table, trigger_name, event_manipulation "
        "FROM information_schema.triggers WHERE trigger_schema = current_schema()"
    )
    functions = database.query(
        "SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
        "WHERE n.nspname = current_schema()"
    )
    return (
        {("column", *map(str, r)) for r in columns}
        | {("index", *map(str, r)) for r in indexes}
        | {("trigger", *map(str, r)) for r in triggers}
        | {("function", str(r[0])) for r in functions}
    )


def _rows(database: Database) -> dict[str, list[tuple[Any, ...]]]:
    return {name: sorted(database.query(sql), key=repr) for name, sql in DATA.items()}


class Catalogs:
    """Copies of one seeded catalog at version 2 (a file copied, a database cloned from a
    template), and reference databases at each version, built by applying migrations."""

    def __init__(self, kind: str, folder: Path, server: str | None, table: Path) -> None:
        self._kind = kind
        self._folder = folder
        self._server = server
        self.seed = self._new()
        seeded = Database(self.seed, create=True)
        _migrate_to(seeded, START_VERSION)
        self.token = _seed(seeded, table)
        self.rows = _rows(seeded)
        seeded.close()
        self.references: dict[int, set[tuple[str, ...]]] = {}
        for version in range(START_VERSION, SCHEMA_VERSION + 1):
            reference = Database(self._new(), create=True)
            _migrate_to(reference, version)
            self.references[version] = _schema(reference)
            reference.close()

    def _new(self) -> str:
        if self._kind == "sqlite":
            return f"sqlite:///{self._folder}/{uuid.uuid4().hex[:12]}.db"
        assert self._server is not None
        return new_database(self._server)

    def copy(self) -> str:
        if self._kind == "sqlite":
            url = self._new()
            shutil.copyfile(sqlite_path(self.seed), sqlite_path(url))
            return url
        import psycopg

        assert self._server is not None
        name = f"t_{uuid.uuid4().hex[:12]}"
        template = self.seed.rsplit("/", 1)[1]
        with psycopg.connect(f"{self._server}/postgres", autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
        return f"{self._server}/{name}"


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("migration-kill") / "t"
    write_deltalake(str(path), pa.table({"id": [1, 2, 3]}))
    return path


@pytest.fixture(params=["sqlite", "postgresql"])
def catalogs(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, table: Path
) -> Iterator[Catalogs]:
    server = request.getfixturevalue("postgres_server") if request.param == "postgresql" else None
    yield Catalogs(request.param, tmp_path_factory.mktemp("catalogs"), server, table)


def _upgrade(url: str) -> subprocess.Popen[bytes]:
    """A process upgrading the catalog at ``url`` (then listing its shares, and exiting)."""
    deltaport = str(Path(sys.executable).parent / "deltaport")
    return subprocess.Popen(
        [deltaport, "share", "list", "--catalog", url],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "DELTAPORT_CATALOG": ""},
    )


def _watch(url: str, until: Callable[[int], bool], process: subprocess.Popen[bytes]) -> None:
    """Poll the catalog's schema version (from another connection) until ``until`` holds
    or the process has exited."""
    database = Database(url)
    try:
        while process.poll() is None and not until(_version(database)):
            time.sleep(0.005)
    finally:
        database.close()


def _kill(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.kill(process.pid, signal.SIGKILL)
    process.wait(30)


def _kill_points(catalogs: Catalogs) -> Iterator[Callable[[str, subprocess.Popen[bytes]], None]]:
    """Ways of choosing when to kill: after a delay, spread over one whole upgrade's
    duration (measured first, on a copy), and on seeing each version committed."""
    process = _upgrade(catalogs.copy())
    started = time.monotonic()
    process.wait(300)
    assert process.returncode == 0
    whole = time.monotonic() - started
    for n in range(1, SPREAD_KILLS + 1):
        yield lambda _url, _process, delay=whole * n / (SPREAD_KILLS + 1): time.sleep(delay)
    for version in range(START_VERSION, SCHEMA_VERSION):
        yield lambda url, process, seen=version: _watch(url, lambda v: v >= seen, process)


def test_kill_9_mid_migration_then_restart(catalogs: Catalogs, tmp_path: Path) -> None:
    hit: list[int] = []
    for n, wait in enumerate(_kill_points(catalogs)):
        url = catalogs.copy()
        process = _upgrade(url)
        wait(url, process)
        _kill(process)

        database = Database(url)
        version = _version(database)
        hit.append(version)
        assert START_VERSION <= version <= SCHEMA_VERSION
        assert _schema(database) == catalogs.references[version], f"kill {n}: mixed schema"
        assert _rows(database) == catalogs.rows, f"kill {n}: rows changed at version {version}"
        database.close()

        if n == 0:
            _serve(url, catalogs.token, tmp_path)  # a server start finishes the upgrade
        else:
            SqlCatalog(url, create=False).database.close()  # what every start does first
        _check_upgraded(url, catalogs)
    print(f"versions the kills left: {hit}")


def _serve(url: str, token: str, tmp_path: Path) -> None:
    """Start a server on the catalog, and read the table with a token minted before."""
    server = start_server({"catalog": url, "signingKey": "migration-kill-key"}, tmp_path)
    try:
        with server.client(token) as recipient:
            shares = recipient.get("/shares")
            assert shares.status_code == 200, shares.text
            assert [s["name"] for s in shares.json()["items"]] == ["S0"]
            query = recipient.post("/shares/S0/schemas/sc/tables/t/query", json={})
            assert query.status_code == 200, query.text
    finally:
        stop_server(server)


def _check_upgraded(url: str, catalogs: Catalogs) -> None:
    database = Database(url)
    try:
        assert _version(database) == SCHEMA_VERSION
        assert _schema(database) == catalogs.references[SCHEMA_VERSION]
        assert _rows(database) == catalogs.rows
        lifetimes = database.query("SELECT name_key, token_lifetime_seconds FROM recipients")
        assert sorted(lifetimes, key=lambda r: int(r[0][1:])) == [
            (f"r{n}", (n % 9 + 1) * 3600) for n in range(RECIPIENTS)
        ]
        meta = database.query("SELECT key, value FROM deltaport_meta ORDER BY key")
        assert [k for k, _ in meta] == [
            "changes_kept_from",
            "generation",
            "schema_version",
            "token_key",
        ]
        assert dict(meta)["token_key"] == "ab" * 32
        if database.kind == "sqlite":
            path = sqlite_path(url)
            with sqlite3.connect(path) as check:
                assert check.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        database.close()
