"""Spark in directory mode against moto (S3 and STS in server mode): corpus tables in the
emulated bucket read with ``accessMode=dir`` equal ``accessMode=url``; a task whose
credentials lapsed asks the server for new ones."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, SparkSession

from deltaport.spark.base.connection import open_table
from deltaport.spark.base.options import parse_options
from deltaport.spark.reading.directory import plan_directory, read_directory_files
from dir_tables import (
    CDF_TABLES,
    TABLES,
    recipient_options,
    start_dir_server,
    vend_count,
    write_dir_profile,
)
from emulators import S3Emulator
from sharing_server import RunningServer, stop_server


@pytest.fixture(scope="module")
def dir_server(
    s3_emulator: S3Emulator, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningServer]:
    running = start_dir_server(s3_emulator, tmp_path_factory.mktemp("dir-spark"))
    yield running
    stop_server(running)


@pytest.fixture(scope="module")
def profile(dir_server: RunningServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_dir_profile(tmp_path_factory.mktemp("dir-profile") / "p.share", dir_server)


@pytest.fixture(scope="module")
def storage(s3_emulator: S3Emulator) -> dict[str, str]:
    return {f"storage.{k}": v for k, v in recipient_options(s3_emulator).items()}


def rows(df: DataFrame) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in df.collect()), key=repr)


def read(spark: SparkSession, url: str, **options: str) -> DataFrame:
    return spark.read.format("deltaSharing").options(**options).load(url)


@pytest.mark.parametrize("alias", sorted(TABLES))
def test_dir_mode_equals_url_mode(
    spark: SparkSession, profile: Path, storage: dict[str, str], alias: str
) -> None:
    url = f"{profile}#s.sc.{alias}"
    by_url = read(spark, url)
    by_dir = read(spark, url, accessMode="dir", **storage)
    assert by_dir.schema == by_url.schema
    assert rows(by_dir) == rows(by_url) and by_url.count() > 0
    old_url = read(spark, url, versionAsOf="0")
    old_dir = read(spark, url, versionAsOf="0", accessMode="dir", **storage)
    assert rows(old_dir) == rows(old_url)
    first = by_url.columns[0]
    value = by_url.collect()[0][0]
    hinted = read(spark, url, accessMode="auto", jsonPredicateHints="true", **storage)
    assert rows(hinted.where(hinted[first] == value)) == rows(by_url.where(by_url[first] == value))


@pytest.mark.parametrize("alias", CDF_TABLES)
def test_change_data_in_dir_mode(
    spark: SparkSession, profile: Path, storage: dict[str, str], alias: str
) -> None:
    url = f"{profile}#s.sc.{alias}"
    cdf = {"readChangeFeed": "true", "startingVersion": "0", "endingVersion": "3"}
    by_url = read(spark, url, **cdf)
    by_dir = read(spark, url, accessMode="dir", **cdf, **storage)
    assert by_dir.schema == by_url.schema
    assert rows(by_dir) == rows(by_url) and by_url.count() > 0


def test_a_task_with_lapsed_credentials_asks_again(
    profile: Path, storage: dict[str, str], dir_server: RunningServer
) -> None:
    options = parse_options({"path": f"{profile}#s.sc.parted", "accessMode": "dir", **storage})
    with open_table(options) as handle:
        directory = handle.directory()
        assert directory is not None
        plan = plan_directory(handle, directory, options, None)
        expected = directory.delta.snapshot().num_files
    lapsed = tuple(
        dataclasses.replace(c, expires_at=datetime(2000, 1, 1, tzinfo=UTC))
        for c in plan.credentials
    )
    before = vend_count(dir_server, "parted")
    schema = pa.schema([pa.field(n, t) for n, t in [("letter", pa.string())]])
    narrowed = dataclasses.replace(plan, credentials=lapsed)
    batches = list(read_directory_files(narrowed, options, schema))
    assert sum(b.num_rows for b in batches) > 0 and expected == 6
    assert vend_count(dir_server, "parted") == before + 1
