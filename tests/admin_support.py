"""A real deltaport server with the admin listener on 127.0.0.1, and the tables it serves:
a corpus table with deletion vectors and column mapping, and two branches of one table."""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from corpus import corpus_table
from deltaport.catalog.rows import TableSpec
from deltaport.catalog.sql_store import SqlCatalog
from difftables import branch, write
from sharing_server import (
    RunningServer,
    free_port,
    start_server,
    stop_server,
    table_entry,
    write_partitioned_table,
)
from waiting import WaitTimeout, wait_until

ADMIN_TOKEN = "admin-token-5b7e0c41d9a2"
HASHED_ADMIN_TOKEN = "second-admin-token-93fa61"
DVCM = "golden__dv-with-columnmapping"
SIGNING_KEY = "a-fixed-key-for-admin-tests"


@dataclass
class AdminServer:
    sharing: RunningServer
    admin: str  # http://127.0.0.1:port

    def api(self, token: str | None = ADMIN_TOKEN) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.admin, headers=headers, timeout=60)


@contextlib.contextmanager
def login(server: AdminServer, token: str = ADMIN_TOKEN) -> Iterator[httpx.Client]:
    """A client signed in to the console."""
    with httpx.Client(base_url=server.admin, timeout=60) as client:
        client.get("/console/login")
        csrf = client.cookies.get("deltaport_login_csrf")
        response = client.post("/console/login", data={"csrf": csrf, "token": token})
        assert response.status_code == 303, response.text
        yield client


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
            # the shared servers see every test's refused tokens from 127.0.0.1: throttling
            # is tested on a server of its own (test_throttle.py)
            "failedAuthLimit": 1000,
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
    return _await_admin(start_server(admin_config(tables, port, **admin), tmp), port)


def start_with_admin(
    config: dict[str, Any],
    tmp: Path,
    token: str = ADMIN_TOKEN,
    catalog: str | None = None,
    **admin: Any,
) -> AdminServer:
    """``config`` served with its admin listener on a port chosen now, opened by ``token``
    (and ``admin``'s other settings), once the admin listener answers."""
    port = free_port()
    config = {**config, "admin": {"port": port, "tokens": [token], **admin}}
    return _await_admin(start_server(config, tmp, catalog=catalog), port)


def _await_admin(sharing: RunningServer, port: int) -> AdminServer:
    running = AdminServer(sharing, f"http://127.0.0.1:{port}")
    document = running.admin + "/api/openapi.json"
    try:
        wait_until(lambda: httpx.get(document, timeout=1), 30, "", ignore=(httpx.HTTPError,))
    except WaitTimeout:
        stop_server(sharing)
        raise RuntimeError(f"the admin listener did not start:\n{sharing.log()}") from None
    return running


CATALOG_TABLES = {
    "sales.eu.orders": "left",
    "sales.eu.orders_v2": "right",
    "lab.corpus.dvcm": "dvcm",
}
"""The tables of the catalog server, by name, and the table of ``admin_tables`` each is."""


@dataclass
class CatalogAdminServer:
    running: AdminServer
    catalog: SqlCatalog


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


@pytest.fixture(scope="session")
def catalog_admin_server(
    admin_tables: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[CatalogAdminServer]:
    """``deltaport serve --catalog`` on a SQLite catalog holding :data:`CATALOG_TABLES`
    (in shares ``sales`` and ``lab``), with the admin listener and no YAML shares."""
    tmp = tmp_path_factory.mktemp("catalog-admin-server")
    url = f"sqlite:///{tmp}/catalog.db"
    catalog = SqlCatalog(url)
    for name, table in CATALOG_TABLES.items():
        share, schema, short = name.split(".")
        if share not in {s.name for s in catalog.contents().shares}:
            catalog.create_share(share)
        catalog.add_table(
            share, schema, short, TableSpec(str(admin_tables[table]), history_shared=True)
        )
    config = {"signingKey": "a-fixed-key-for-catalog-admin-tests"}
    running = start_with_admin(config, tmp / "server", catalog=url, failedAuthLimit=1000)
    yield CatalogAdminServer(running, catalog)
    stop_server(running.sharing)


def start_empty_catalog_server(tmp: Path) -> CatalogAdminServer:
    """``deltaport serve --catalog`` on a new, empty SQLite catalog (audit records kept in
    it), with the admin listener: for tests that change the catalog from the console."""
    url = f"sqlite:///{tmp}/catalog.db"
    catalog = SqlCatalog(url)
    config = {"signingKey": "a-fixed-key-for-console-management-tests"}
    running = start_with_admin(config, tmp / "server", catalog=url, failedAuthLimit=1000)
    return CatalogAdminServer(running, catalog)
