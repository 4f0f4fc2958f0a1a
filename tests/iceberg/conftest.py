"""A sharing server (YAML configuration) whose share ``Sales`` holds corpus tables and a
table written here, served to Iceberg readers at ``/iceberg``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from corpus import corpus_table
from sharing_server import TOKEN, RunningServer, start_server, stop_server, table_entry


def write_ranges_table(root: Path) -> Path:
    """Three commits of five rows each, partitioned by ``region``, with ``id`` ranges that
    do not overlap between files (so that statistics can prune)."""
    for version, region in enumerate(["eu", "us", "eu"]):
        rows = pa.table(
            {
                "id": pa.array([version * 100 + i for i in range(5)], pa.int64()),
                "region": [region] * 5,
                "name": [f"row {version}-{i}" for i in range(5)],
            }
        )
        write_deltalake(str(root), rows, mode="append", partition_by=["region"])
    return root


@pytest.fixture(scope="session")
def iceberg_tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("iceberg-tables")
    return {
        "ranges": write_ranges_table(root / "ranges"),
        "basic": corpus_table("dat__basic_append").path,
        "dv": corpus_table("drs__table-with-dv-small").path,
        "cm": corpus_table("drs__table_with_column_mapping").path,
        "variant": corpus_table("golden__spark-variant-checkpoint").path,
    }


@pytest.fixture(scope="session")
def iceberg_server(
    iceberg_tables: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningServer]:
    tmp = tmp_path_factory.mktemp("iceberg-server")
    config: dict[str, Any] = {
        "version": 1,
        "authorization": {"bearerToken": "${DELTAPORT_TEST_TOKEN}"},
        "signingKey": "a-fixed-key-for-tests",
        "iceberg": {"metadataDirectory": str(tmp / "metadata")},
        "shares": [
            {
                "name": "Sales",
                "schemas": [
                    {
                        "name": "d",
                        "tables": [
                            table_entry("ranges", iceberg_tables["ranges"], historyShared=True),
                            table_entry("basic", iceberg_tables["basic"], historyShared=True),
                            table_entry("dv", iceberg_tables["dv"]),
                            table_entry("cm", iceberg_tables["cm"]),
                            table_entry("variant", iceberg_tables["variant"]),
                        ],
                    },
                    {"name": "other", "tables": []},
                ],
            },
            {"name": "Second", "schemas": []},
        ],
    }
    running = start_server(config, tmp)
    yield running
    stop_server(running)


@pytest.fixture
def catalog_uri(iceberg_server: RunningServer) -> str:
    return iceberg_server.base + "/iceberg"


__all__ = ["TOKEN", "catalog_uri", "iceberg_server", "iceberg_tables"]
