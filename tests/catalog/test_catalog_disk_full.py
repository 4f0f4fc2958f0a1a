"""A full disk under a catalog server: the catalog database (SQLite), the audit log's JSON
lines and the Iceberg metadata directory on one small filesystem that the test fills.

The server runs in a mount namespace of its own (``unshare -m``) with a 16 MB tmpfs
mounted over its data directory: a real filesystem that runs out of space (``ENOSPC``),
private to the server. The test reaches it through ``/proc/PID/root``, fills it with one
file, and frees it by deleting that file. What must hold (docs/reliability.md, "Faults"):
an admin write is refused with 507 ``INSUFFICIENT_STORAGE`` and nothing of it is kept;
the catalog stays intact; recipients keep being served (the Delta Sharing API and the
Iceberg catalog); the audit log keeps what it cannot write and writes it once space is
back; and writes work again without a restart.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa
import pytest
import yaml
from deltalake import write_deltalake

from admin_support import AdminServer, login
from deltaport.catalog.rows import TableSpec
from deltaport.catalog.sql_store import SqlCatalog
from sharing_server import RunningServer, free_port, stop_server
from waiting import wait_until

ADMIN_TOKEN = "disk-full-admin-token-7d2e"
TMPFS_SIZE = "16m"

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="mounting a tmpfs in a mount namespace needs root"
)


class FullDiskServer:
    """A catalog server whose data directory is a tmpfs of its own."""

    def __init__(self, tmp: Path, table: Path, catalog_on_tmpfs: bool = True) -> None:
        self.data = tmp / "data"  # the mount point (empty outside the server's namespace)
        self.data.mkdir()
        seed = tmp / "seed.db"
        store = SqlCatalog(f"sqlite:///{seed}")
        store.create_share("s")
        store.add_table("s", "sc", "t", TableSpec(str(table)))
        self.token = store.create_recipient("a").token
        store.grant("s", "a")
        store.database.close()
        admin_port = free_port()
        catalog = self.data / "catalog.db" if catalog_on_tmpfs else tmp / "catalog.db"
        config = {
            "catalog": f"sqlite:///{catalog}",
            "signingKey": "disk-full-key",
            "admin": {"port": admin_port, "tokens": [ADMIN_TOKEN]},
            "audit": {"jsonLines": str(self.data / "audit.jsonl")},
            "iceberg": {"metadataDirectory": str(self.data / "iceberg")},
        }
        (tmp / "server.yaml").write_text(yaml.safe_dump(config))
        port = free_port()
        deltaport = [sys.executable, "-m", "deltaport.server", "--config", str(tmp / "server.yaml")]
        deltaport += ["--host", "127.0.0.1", "--port", str(port)]
        script = (
            f"mount -t tmpfs -o size={TMPFS_SIZE},mode=0700 tmpfs {self.data} && "
            f'cp {seed} {catalog} && exec "$@"'
        )
        log_path = tmp / "server.log"
        process = subprocess.Popen(
            ["unshare", "-m", "sh", "-c", script, "sh", *deltaport],
            stdout=log_path.open("wb"),
            stderr=subprocess.STDOUT,
        )
        self.server = RunningServer(process, f"http://127.0.0.1:{port}", "/delta-sharing", log_path)
        self.admin = AdminServer(self.server, f"http://127.0.0.1:{admin_port}")
        self.api = httpx.Client(
            base_url=self.admin.admin,
            headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
            timeout=30,
        )
        self._wait()
        self.inside = Path(f"/proc/{process.pid}/root") / str(self.data).lstrip("/")
        """The data directory as the server sees it."""

    def _wait(self) -> None:
        def started() -> bool:
            assert self.server.process.poll() is None, f"server exited:\n{self.server.log()}"
            self.api.get("/api/openapi.json", timeout=1)
            httpx.get(self.server.url + "/openapi.json", timeout=1)
            return True

        failed = (httpx.HTTPError,)
        wait_until(started, 60, "the server to start", ignore=failed, details=self.server.log)

    def fill(self) -> None:
        """Fill the filesystem to its last byte."""
        descriptor = os.open(self.inside / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            for size in (65536, 4096, 1):
                while True:
                    try:
                        os.write(descriptor, b"\0" * size)
                    except OSError:
                        break
        finally:
            os.close(descriptor)
        assert shutil.disk_usage(self.inside).free < 8192

    def free(self) -> None:
        (self.inside / "filler").unlink()

    def audit_lines(self) -> list[dict[str, Any]]:
        text = (self.inside / "audit.jsonl").read_text()
        assert text == "" or text.endswith("\n"), "a half-written audit line"
        return [json.loads(line) for line in text.splitlines()]

    def recipients(self) -> set[str]:
        """The recipients the admin API reads from the catalog (a read needs no space)."""
        answer = self.api.get("/api/catalog")
        assert answer.status_code == 200, answer.text
        return {r["name"] for r in answer.json()["recipients"]}

    def integrity(self) -> list[tuple[str]]:
        with sqlite3.connect(self.inside / "catalog.db") as db:
            return db.execute("PRAGMA integrity_check").fetchall()

    def stop(self) -> None:
        self.api.close()
        stop_server(self.server)


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[FullDiskServer]:
    table = tmp_path / "t"
    write_deltalake(str(table), pa.table({"id": [1, 2, 3]}))
    running = FullDiskServer(tmp_path, table)
    yield running
    running.stop()


@pytest.fixture
def full_lines_disk(tmp_path: Path) -> Iterator[FullDiskServer]:
    """The catalog on the ordinary disk, the JSON lines (and Iceberg metadata) on the tmpfs."""
    table = tmp_path / "t"
    write_deltalake(str(table), pa.table({"id": [1, 2, 3]}))
    running = FullDiskServer(tmp_path, table, catalog_on_tmpfs=False)
    yield running
    running.stop()


def _eventually(check: Callable[[], bool], what: str) -> None:
    """Wait for the audit log's writer (it flushes every second) to do ``what``."""
    wait_until(check, 30, f"the audit log to {what}")


def _dropped(running: FullDiskServer) -> float:
    name = "deltaport_audit_records_dropped_total"
    for line in running.api.get("/metrics").text.splitlines():
        if line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def test_a_full_disk_refuses_writes_keeps_serving_and_recovers(full_disk: FullDiskServer) -> None:
    server = full_disk.server
    assert full_disk.api.post("/api/recipients", json={"name": "before"}).status_code == 201
    iceberg = server.base + "/iceberg/v1/shares/s/namespaces/sc/tables/t"
    auth = {"Authorization": f"Bearer {full_disk.token}"}

    full_disk.fill()
    refused = full_disk.api.post("/api/recipients", json={"name": "during"})
    assert refused.status_code == 507, refused.text
    assert refused.json()["errorCode"] == "INSUFFICIENT_STORAGE"
    assert "during" not in full_disk.recipients()
    granted = full_disk.api.post("/api/shares/s/grants", json={"recipient": "before"})
    assert granted.status_code == 507, granted.text

    with login(full_disk.admin, ADMIN_TOKEN) as console:
        csrf = re.search(r'name="csrf" value="([^"]+)"', console.get("/console/shares").text)
        assert csrf is not None
        form = {"csrf": csrf.group(1), "name": "console-share"}
        page = console.post("/console/shares", data=form)
        assert page.status_code == 400, page.text  # the form again, saying why
        assert "disk is full" in page.text

    with server.client(full_disk.token) as recipient:
        for _ in range(5):
            assert recipient.get("/shares").status_code == 200
            query = recipient.post("/shares/s/schemas/sc/tables/t/query", json={})
            assert query.status_code == 200, query.text
    loaded = httpx.get(iceberg, headers=auth, timeout=30)
    assert loaded.status_code == 507, loaded.text  # its first load writes its metadata
    assert "disk is full" in loaded.json()["error"]["message"]
    time.sleep(2.5)  # two flushes of the audit log, which cannot write
    assert _dropped(full_disk) == 0
    assert full_disk.recipients() == {"a", "before"}
    assert "console-share" not in full_disk.api.get("/api/catalog").text

    full_disk.free()
    made = full_disk.api.post("/api/recipients", json={"name": "after"})
    assert made.status_code == 201, made.text
    assert full_disk.recipients() == {"a", "before", "after"}
    assert full_disk.integrity() == [("ok",)]
    assert httpx.get(iceberg, headers=auth, timeout=30).status_code == 200

    def written() -> bool:
        lines = full_disk.audit_lines()
        return sum(r.get("operation") == "deltaSharingListShares" for r in lines) == 5

    _eventually(written, "write the records kept while the disk was full")
    kept = [r for r in full_disk.audit_lines() if r.get("status") == 507]
    assert len(kept) >= 4, "the refusals made while the disk was full were not audited"


def test_audit_lines_on_a_full_disk_are_counted_and_resume(
    full_lines_disk: FullDiskServer,
) -> None:
    """The database takes the records, the JSON lines file cannot: they are counted as
    dropped, the file keeps no torn line, and the writer goes on once space is back."""
    server = full_lines_disk.server
    full_lines_disk.fill()
    with server.client(full_lines_disk.token) as recipient:
        recipient.headers["User-Agent"] = "while-full/1"
        for _ in range(5):
            assert recipient.get("/shares").status_code == 200
    _eventually(lambda: _dropped(full_lines_disk) >= 5, "count the records the file could not take")
    full_lines_disk.audit_lines()  # no torn line

    full_lines_disk.free()
    with server.client(full_lines_disk.token) as recipient:
        recipient.headers["User-Agent"] = "after-free/1"
        for _ in range(3):
            assert recipient.get("/shares").status_code == 200

    def agents() -> list[str | None]:
        return [r.get("userAgent") for r in full_lines_disk.audit_lines()]

    _eventually(lambda: agents().count("after-free/1") == 3, "go on once space was back")
    assert "while-full/1" not in agents()
