"""``kill -9`` of a catalog server in the middle of sharing requests and admin writes, on
SQLite and on PostgreSQL, then a restart on the same database and ``signingKey``.

What must hold (docs/reliability.md, "Faults"): every admin write that was answered is
there, nothing is half-written (each recipient has its credential), tokens, OAuth access
tokens, page tokens and refresh tokens minted before the kill still work, and the audit
log kept every request answered more than a second before it (its writer flushes once a
second; the test leaves two)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import threading
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa
import pytest
from deltalake import write_deltalake

from admin_support import start_with_admin
from deltaport.catalog.database.connection import sqlite_path
from deltaport.catalog.rows import RecipientSpec, TableSpec
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.catalog.tokens import OAUTH
from postgres import new_database, postgres_server  # noqa: F401
from sharing_server import RunningServer
from waiting import wait_until

ADMIN_TOKEN = "kill-admin-token-51c0"
SIGNING_KEY = "kill-tests-fixed-key"
TABLE = "/shares/s/schemas/sc/tables/t"
END = {"delta-sharing-capabilities": "responseformat=parquet;includeendstreamaction=true"}
BEFORE = "before-the-kill/1"
WRITES_BEFORE_KILL = 5


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("kill") / "t"
    for commit in range(3):  # three files: pages of one
        write_deltalake(str(path), pa.table({"id": [commit]}), mode="append")
    return path


@pytest.fixture(params=["sqlite", "postgresql"])
def catalog_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/catalog.db"
    return new_database(request.getfixturevalue("postgres_server"))


def _seed(url: str, table: Path) -> dict[str, Any]:
    store = SqlCatalog(url)
    store.create_share("s")
    store.add_table("s", "sc", "t", TableSpec(str(table)))
    token = store.create_recipient("a").token
    oauth = store.create_recipient("o", RecipientSpec(authentication_type=OAUTH))
    for name in ("a", "o"):
        store.grant("s", name)
    store.database.close()
    return {"token": token, "client_id": oauth.client_id, "secret": oauth.token}


def _start(url: str, tmp: Path) -> tuple[RunningServer, httpx.Client]:
    config = {
        "catalog": url,
        "signingKey": SIGNING_KEY,
        "audit": {"jsonLines": str(tmp.parent / "audit.jsonl")},
    }
    running = start_with_admin(config, tmp, ADMIN_TOKEN)
    return running.sharing, running.api(ADMIN_TOKEN)


def _lines(answer: httpx.Response) -> list[dict[str, Any]]:
    assert answer.status_code == 200, answer.text
    return [json.loads(line) for line in answer.text.splitlines()]


class Load:
    """Admin writes (new recipients) and sharing requests, until the process dies."""

    def __init__(self, server: RunningServer, api: httpx.Client, token: str) -> None:
        self.acknowledged: list[str] = []
        self.stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._writes, args=(api,)),
            threading.Thread(target=self._reads, args=(server, token)),
        ]

    def __enter__(self) -> Load:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        for thread in self._threads:
            thread.join(60)

    def _writes(self, api: httpx.Client) -> None:
        for n in range(10_000):
            if self.stop.is_set():
                return
            try:
                made = api.post("/api/recipients", json={"name": f"w{n}"})
            except httpx.HTTPError:
                return  # killed mid-write: this one was never acknowledged
            if made.status_code == 201:
                self.acknowledged.append(f"w{n}")

    def _reads(self, server: RunningServer, token: str) -> None:
        with server.client(token) as c:
            while not self.stop.is_set():
                try:
                    c.post(f"{TABLE}/query", json={})
                except httpx.HTTPError:
                    return


def _audited(catalog_url: str) -> int:
    """The audit records of the requests made before the load (user agent ``BEFORE``)."""
    store = SqlCatalog(catalog_url)
    try:
        with store.database.read() as tx:
            rows = tx.execute("SELECT count(*) FROM audit_records WHERE user_agent = ?", (BEFORE,))
        return int(rows[0][0])
    finally:
        store.database.close()


def test_kill_9_mid_writes_then_restart(catalog_url: str, table: Path, tmp_path: Path) -> None:
    minted = _seed(catalog_url, table)
    server, api = _start(catalog_url, tmp_path / "first")
    with server.client(minted["token"]) as a:
        a.headers["User-Agent"] = BEFORE
        page = _lines(a.post(f"{TABLE}/query", json={"maxFiles": 1}, headers=END))
        refresh = _lines(a.post(f"{TABLE}/query", json={"includeRefreshToken": True}, headers=END))
        for _ in range(20):
            assert a.get("/shares").status_code == 200
    oauth = httpx.post(
        server.url + "/oauth/token",
        data={"grant_type": "client_credentials"},
        auth=(minted["client_id"], minted["secret"]),
    )
    assert oauth.status_code == 200, oauth.text
    wait_until(lambda: _audited(catalog_url) == 22, 60, "the 22 records written before the kill")

    with Load(server, api, minted["token"]) as load:

        def written() -> bool:
            assert server.process.poll() is None, server.log()
            return len(load.acknowledged) >= WRITES_BEFORE_KILL

        wait_until(written, 60, f"{WRITES_BEFORE_KILL} acknowledged writes", 0.01)
        os.kill(server.process.pid, signal.SIGKILL)
        server.process.wait(30)
    acknowledged = list(load.acknowledged)

    if catalog_url.startswith("sqlite"):
        with sqlite3.connect(sqlite_path(catalog_url)) as db:
            assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    store = SqlCatalog(catalog_url)
    contents = store.contents()
    store.database.close()
    audited = _audited(catalog_url)
    names = {r.name for r in contents.recipients.values()}
    assert set(acknowledged) <= names
    holders = {t.recipient_key for t in contents.tokens.values()}
    assert all(key in holders for key, r in contents.recipients.items() if r.name != "o")
    assert audited == 22  # two queries and twenty listings, none lost
    json_lines = (tmp_path / "audit.jsonl").read_text().splitlines()
    assert sum(BEFORE in line for line in json_lines) == 22

    restarted, api2 = _start(catalog_url, tmp_path / "second")
    try:
        with restarted.client(minted["token"]) as a:
            assert a.get("/shares").status_code == 200
            next_page = page[-1]["endStreamAction"]["nextPageToken"]
            body = {"maxFiles": 1, "pageToken": next_page}
            assert len([x for x in _lines(a.post(f"{TABLE}/query", json=body)) if "file" in x]) == 1
            again = {
                "includeRefreshToken": True,
                "refreshToken": refresh[-1]["endStreamAction"]["refreshToken"],
            }
            assert (
                len(
                    [
                        x
                        for x in _lines(a.post(f"{TABLE}/query", json=again, headers=END))
                        if "file" in x
                    ]
                )
                == 3
            )
        with restarted.client(oauth.json()["access_token"]) as o:
            assert o.get("/shares").status_code == 200
        assert api2.post("/api/recipients", json={"name": "after"}).status_code == 201
    finally:
        restarted.process.terminate()
        restarted.process.wait(30)
