"""Batch read speed of the deltaSharing Spark data source against ``spark.read.parquet``
on the same files on local disk, in the same run and the same SparkSession.

Writes a Delta table of ``N_FILES`` parquet files with deltalake, serves it with
``python -m deltaport.server`` on a free port, then times a full scan (an aggregate over
every column, so no reader can skip columns or rows) through each reader, best of
``RUNS`` after one warm-up each; the readers' runs alternate, so a busy machine slows
all alike. A third reader, a minimal Python data source that decodes the same local
files with pyarrow, shows the floor of any Python data source (Arrow batches handed
from a Python worker to the JVM), against which the rest is the cost of sharing.
Run: ``uv run python benchmarks/bench_spark.py``.
"""

from __future__ import annotations

import functools
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from deltalake import DeltaTable, write_deltalake
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

import deltaport.spark

N_FILES = 8
ROWS_PER_FILE = 1_000_000
RUNS = 3
TOKEN = "bench-token"


def write_table(root: Path) -> list[str]:
    rng = np.random.default_rng(7)
    for i in range(N_FILES):
        ids = np.arange(i * ROWS_PER_FILE, (i + 1) * ROWS_PER_FILE, dtype=np.int64)
        data = pa.table(
            {
                "id": ids,
                "x": rng.random(ROWS_PER_FILE),
                "n": rng.integers(0, 1000, ROWS_PER_FILE, dtype=np.int32),
                "s": pa.array([f"name-{v % 5000}" for v in ids.tolist()]),
            }
        )
        write_deltalake(str(root), data, mode="append")
    return [str(root / p) for p in DeltaTable(str(root)).file_uris()]


class LocalFiles(InputPartition):
    def __init__(self, files: list[str]) -> None:
        super().__init__(files)
        self.files = files


class LocalParquetReader(DataSourceReader):
    def __init__(self, files: list[str]) -> None:
        self.files = files

    def partitions(self) -> list[InputPartition]:
        return [LocalFiles(self.files[0::2]), LocalFiles(self.files[1::2])]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, LocalFiles)
        for path in partition.files:
            yield from pq.ParquetFile(path).iter_batches(batch_size=65_536, use_threads=False)


class LocalParquetSource(DataSource):
    """The least a Python data source can do: decode local files in the worker."""

    @classmethod
    def name(cls) -> str:
        return "benchLocalParquet"

    def schema(self) -> str:
        return "id long, x double, n int, s string"

    def reader(self, schema: StructType) -> DataSourceReader:
        return LocalParquetReader(self.options["files"].split(","))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(table: Path, work: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    config = {
        "version": 1,
        "authorization": {"bearerToken": TOKEN},
        "shares": [
            {
                "name": "b",
                "schemas": [{"name": "s", "tables": [{"name": "t", "location": str(table)}]}],
            }
        ],
    }
    (work / "server.yaml").write_text(yaml.safe_dump(config))
    command = [sys.executable, "-m", "deltaport.server", "--config", str(work / "server.yaml")]
    process = subprocess.Popen(
        [*command, "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}/delta-sharing"
    for _ in range(300):
        try:
            httpx.get(endpoint + "/shares", headers={"Authorization": f"Bearer {TOKEN}"})
            return process, endpoint
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("the server did not start")


def full_scan(df: DataFrame) -> tuple[object, ...]:
    row = df.agg(
        F.count("*"), F.sum("id"), F.round(F.sum("x"), 3), F.sum("n"), F.sum(F.length("s"))
    ).collect()[0]
    return tuple(row)


def timed(fn: Callable[[], tuple[object, ...]]) -> tuple[float, tuple[object, ...]]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def best_of_alternating(
    runs: int, readers: list[Callable[[], tuple[object, ...]]]
) -> list[tuple[float, tuple[object, ...]]]:
    """Best time and result of each reader: one warm-up each, then ``runs`` rounds."""
    results = [fn() for fn in readers]
    best = [float("inf")] * len(readers)
    for _ in range(runs):
        for i, fn in enumerate(readers):
            seconds, results[i] = timed(fn)
            best[i] = min(best[i], seconds)
    return list(zip(best, results, strict=True))


def main() -> None:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        files = write_table(work / "table")
        size = sum(Path(f).stat().st_size for f in files)
        process, endpoint = start_server(work / "table", work)
        profile = work / "bench.share"
        profile.write_text(
            json.dumps({"shareCredentialsVersion": 1, "endpoint": endpoint, "bearerToken": TOKEN})
        )
        spark = (
            SparkSession.builder.master("local[2]")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "2")
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")
        deltaport.spark.register(spark)
        spark.dataSource.register(LocalParquetSource)
        try:
            sharing = spark.read.format("deltaSharing").load(f"{profile}#b.s.t")
            parquet = spark.read.parquet(*files)
            local = spark.read.format("benchLocalParquet").option("files", ",".join(files)).load()
            scans = [sharing, parquet, local]
            timings = best_of_alternating(RUNS, [functools.partial(full_scan, df) for df in scans])
            (t_sharing, r_sharing), (t_parquet, r_parquet), (t_local, r_local) = timings
        finally:
            spark.stop()
            process.terminate()
            process.wait(10)
    assert r_sharing == r_parquet == r_local, (r_sharing, r_parquet, r_local)
    rows = N_FILES * ROWS_PER_FILE
    print(f"table: {N_FILES} files, {rows:,} rows, {size / 2**20:.1f} MiB")
    print(f"deltaSharing data source: {t_sharing:.2f} s")
    print(f"spark.read.parquet:       {t_parquet:.2f} s")
    print(f"Python data source floor: {t_local:.2f} s")
    print(f"ratio (deltaSharing / parquet): {t_sharing / t_parquet:.2f}x")
    print(f"ratio (floor / parquet):        {t_local / t_parquet:.2f}x")


if __name__ == "__main__":
    main()
