"""Fixtures: a real deltaport server process over deltalake-written and corpus tables, and
profile files pointing at it.

The server-process helpers live in ``tests/sharing_server.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import sharing_server as server_process
from client_support import (
    client_server_config,
    write_many_small_files,
    write_profile,
)
from corpus import corpus_table
from emulators import serve_asgi
from sharing_proxy import SharingProxy


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
    proxy = SharingProxy(sharing_server.url)
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
