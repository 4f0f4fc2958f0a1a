"""Fixtures: one local SparkSession for all Spark tests, and a real deltaport server over
corpus tables and tables written here with deltalake.

The server-process helpers live in ``tests/sharing_server.py``.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from corpus import corpus_table
from spark_support import CORPUS_TABLES, STREAM_TABLES, TOKEN, append, server_process


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    session = (
        SparkSession.builder.master("local[2]")
        .appName("deltaport-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.python.filterPushdown.enabled", "true")
        .config("spark.sql.streaming.pollingDelay", "10ms")
        .getOrCreate()
    )
    from deltaport.spark import register

    register(session)
    yield session
    session.stop()


@pytest.fixture(scope="session")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("spark_tables")
    found = {name: corpus_table(name).path for name in CORPUS_TABLES}
    found["parted"] = server_process.write_partitioned_table(root / "parted")
    cdf = root / "cdf"
    append(cdf, range(0, 3))
    append(cdf, range(3, 5))
    found["cdf"] = cdf
    for name in STREAM_TABLES:
        for start in range(0, 6, 2):
            append(root / name, range(start, start + 2))
        found[name] = root / name
    return found


def _config(tables: dict[str, Path]) -> dict[str, Any]:
    entries = [
        server_process.table_entry(name.replace("-", "_"), path, historyShared=True)
        for name, path in tables.items()
    ]
    return {
        "version": 1,
        "authorization": {"bearerToken": "${DELTAPORT_TEST_TOKEN}"},
        "signingKey": "a-fixed-key-for-spark-tests",
        "shares": [{"name": "s", "schemas": [{"name": "d", "tables": entries}]}],
    }


@pytest.fixture(scope="session")
def server(tables: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    running = server_process.start_server(_config(tables), tmp_path_factory.mktemp("spark_server"))
    yield running
    server_process.stop_server(running)


@pytest.fixture(scope="session")
def profile(server: Any, tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("profile") / "test.share"
    path.write_text(
        json.dumps({"shareCredentialsVersion": 1, "endpoint": server.url, "bearerToken": TOKEN})
    )
    return str(path)
