"""Fixtures: a real deltaport server process over deltalake-written and corpus tables, and
profile files pointing at it.

The server-process helpers live in ``tests/sharing_server.py``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import write_deltalake

import sharing_server as server_process
from corpus import corpus_table
from emulators import serve_asgi
from sharing_proxy import SharingProxy

TOKEN: str = server_process.TOKEN


def write_profile(path: Path, endpoint: str, **extra: Any) -> Path:
    profile = {"shareCredentialsVersion": 1, "endpoint": endpoint, "bearerToken": TOKEN, **extra}
    path.write_text(json.dumps(profile))
    return path


def write_many_small_files(root: Path, n_files: int, rows_per_file: int = 50) -> Path:
    """One deltalake append per batch of files: ``n_files`` real data files."""
    for i in range(n_files):
        start = i * rows_per_file
        data = pa.table(
            {
                "id": pa.array(range(start, start + rows_per_file), pa.int64()),
                "part": pa.array([f"p{i % 4}"] * rows_per_file),
                "x": pa.array([float(v) / 3 for v in range(start, start + rows_per_file)]),
            }
        )
        write_deltalake(str(root), data, mode="append", partition_by=["part"])
    return root


@pytest.fixture(scope="session")
def client_tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("client-tables")
    return {
        "parted": server_process.write_partitioned_table(root / "parted"),
        "small_files": write_many_small_files(root / "small_files", 40),
        "basic": corpus_table("dat__basic_append").path,
        "dv": corpus_table("drs__table-with-dv-small").path,
        "cm": corpus_table("drs__table_with_column_mapping").path,
    }


CDF_TABLES = {
    "cdf": "drs__cdf-table",
    "cdf_dv": "drs__cdf-table-with-cdc-and-dvs",
    "cdf_cm": "krs__cdf-column-mapping-name-mode",
    "cdf_dv_pairs": "krs__cdf-table-with-dv",
}


def client_server_config(tables: dict[str, Path], **settings: Any) -> dict[str, Any]:
    return {
        "version": 1,
        "authorization": {"bearerToken": "${DELTAPORT_TEST_TOKEN}"},
        "signingKey": "client-tests-signing-key",
        **settings,
        "shares": [
            {
                "name": "share1",
                "schemas": [
                    {
                        "name": "default",
                        "tables": [
                            {"name": name, "location": str(path), "historyShared": True}
                            for name, path in tables.items()
                        ],
                    },
                    {
                        "name": "other",
                        "tables": [{"name": "again", "location": str(tables["basic"])}],
                    },
                    {
                        "name": "cdf",
                        "tables": [
                            {
                                "name": alias,
                                "location": str(corpus_table(name).path),
                                "historyShared": True,
                            }
                            for alias, name in CDF_TABLES.items()
                        ],
                    },
                ],
            },
            {"name": "share2", "schemas": []},
        ],
    }


@pytest.fixture(scope="session")
def sharing_server(
    client_tables: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    running = server_process.start_server(
        client_server_config(client_tables), tmp_path_factory.mktemp("client-server")
    )
    yield running
    server_process.stop_server(running)


@pytest.fixture(scope="session")
def profile(sharing_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("profiles") / "server.share"
    return write_profile(path, sharing_server.url)


@pytest.fixture(scope="session")
def proxy_server(sharing_server: Any) -> Iterator[SharingProxy]:
    cdf = {f"share1.default.{alias}": corpus_table(name).path for alias, name in CDF_TABLES.items()}
    proxy = SharingProxy(sharing_server.url, cdf)
    with serve_asgi(proxy.app()) as base:
        proxy.base = base
        yield proxy


@pytest.fixture
def proxy(proxy_server: SharingProxy) -> Iterator[SharingProxy]:
    proxy_server.reset()
    yield proxy_server
    proxy_server.reset()


@pytest.fixture(scope="session")
def proxy_profile(proxy_server: SharingProxy, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("proxy-profile") / "proxy.share"
    return write_profile(path, proxy_server.base + "/sharing")
