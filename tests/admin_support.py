"""A real deltaport server with the admin listener on 127.0.0.1, and the tables it serves:
a corpus table with deletion vectors and column mapping, and two branches of one table."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from corpus import corpus_table
from deltaport.admin.tokens import AdminTokens, token_hash
from deltaport.console.sessions import Sessions
from difftables import branch, write
from sharing_server import (
    RunningServer,
    free_port,
    start_server,
    stop_server,
    table_entry,
    write_partitioned_table,
)

ADMIN_TOKEN = "admin-token-5b7e0c41d9a2"
HASHED_ADMIN_TOKEN = "second-admin-token-93fa61"
DVCM = "golden__dv-with-columnmapping"
SIGNING_KEY = "a-fixed-key-for-admin-tests"


def session_cookie(issued_at: float, lifetime: int, token: str = ADMIN_TOKEN) -> str:
    """A console session cookie as the test servers (signing key ``SIGNING_KEY``) seal it,
    issued at ``issued_at`` (Unix seconds) for ``lifetime`` seconds: a session that
    expired long ago, with no wait on the real clock."""
    key = hashlib.sha256(b"deltaport-admin\0" + SIGNING_KEY.encode()).digest()
    sessions = Sessions(key, AdminTokens([token]), lifetime, clock=lambda: issued_at)
    return sessions.start(token_hash(token))


@dataclass
class AdminServer:
    sharing: RunningServer
    admin: str  # http://127.0.0.1:port

    def api(self, token: str | None = ADMIN_TOKEN) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.admin, headers=headers, timeout=60)


def write_branches(root: Path) -> tuple[Path, Path]:
    """``left`` and ``right``: one table copied after two commits, then one commit on the
    left (rows 4) and two on the right (row 5 inserted, then row 2 changed and 4 never)."""
    base = root / "base"
    write(base, {"id": [1, 2, 3], "value": ["a", "b", "c"]})
    write(base, {"id": [10], "value": ["j"]})
    left = branch(base, root / "left")
    right = branch(base, root / "right")
    write(left, {"id": [4], "value": ["d"]})
    write(right, {"id": [5], "value": ["e"]})
    write(
        right,
        {"id": [1, 2, 3, 5, 10], "value": ["a", "B", "c", "e", "j"]},
        mode="overwrite",
    )
    return left, right


@pytest.fixture(scope="session")
def admin_tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("admin-tables")
    left, right = write_branches(root)
    return {
        "dvcm": corpus_table(DVCM).path,
        "parted": write_partitioned_table(root / "parted"),
        "left": left,
        "right": right,
    }


def admin_config(tables: dict[str, Path], port: int, **admin: Any) -> dict[str, Any]:
    return {
        "version": 1,
        "authorization": {"bearerToken": "${DELTAPORT_TEST_TOKEN}"},
        "signingKey": SIGNING_KEY,
        "admin": {
            "port": port,
            "tokens": [
                ADMIN_TOKEN,
                "sha256:" + hashlib.sha256(HASHED_ADMIN_TOKEN.encode()).hexdigest(),
            ],
            **admin,
        },
        "shares": [
            {
                "name": "lake",
                "schemas": [
                    {
                        "name": "main",
                        "tables": [
                            table_entry("dvcm", tables["dvcm"]),
                            table_entry("parted", tables["parted"], historyShared=True),
                        ],
                    },
                    {
                        "name": "branches",
                        "tables": [
                            table_entry("left", tables["left"]),
                            table_entry("right", tables["right"]),
                        ],
                    },
                ],
            }
        ],
    }


def start_admin_server(tables: dict[str, Path], tmp: Path, **admin: Any) -> AdminServer:
    port = free_port()
    sharing = start_server(admin_config(tables, port, **admin), tmp)
    running = AdminServer(sharing, f"http://127.0.0.1:{port}")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(running.admin + "/api/openapi.json", timeout=1)
            return running
        except httpx.HTTPError:
            time.sleep(0.1)
    stop_server(sharing)
    raise RuntimeError(f"the admin listener did not start:\n{sharing.log()}")


@pytest.fixture(scope="session")
def admin_server(
    admin_tables: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[AdminServer]:
    running = start_admin_server(admin_tables, tmp_path_factory.mktemp("admin-server"))
    yield running
    stop_server(running.sharing)


@pytest.fixture(scope="session")
def short_session_server(
    admin_tables: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[AdminServer]:
    """Sessions of 2 seconds, to see them expire."""
    running = start_admin_server(
        admin_tables, tmp_path_factory.mktemp("short-sessions"), sessionSeconds=2
    )
    yield running
    stop_server(running.sharing)
