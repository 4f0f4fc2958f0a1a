"""What pushing Spark's ``startsWith`` / ``LIKE 'prefix%'`` filters down as a string range
saves: the same filtered count through the deltaSharing data source with hints off and on
(``jsonPredicateHints`` with ``spark.sql.python.filterPushdown.enabled``), in the same run
and SparkSession.

Writes a Delta table of ``N_FILES`` files whose ``key`` column holds one prefix each
(``k0000-...``, ``k0001-...``), serves it with ``python -m deltaport.server``, and counts
the rows whose key starts with one file's prefix; the readers' runs alternate, best of
``RUNS`` after a warm-up each. Spark 4.3's Python data sources take filters
(``pushFilters``) but not column pruning, so the files skipped are what a filter saves.
Run: ``uv run python benchmarks/bench_spark_pushdown.py``.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
from bench_spark import TOKEN, best_of_alternating, start_server
from deltalake import write_deltalake
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import deltaport.spark

N_FILES = 100
ROWS_PER_FILE = 20_000
RUNS = 3
PREFIX = "k0042"


def write_table(root: Path) -> None:
    for i in range(N_FILES):
        keys = [f"k{i:04d}-{r:06d}" for r in range(ROWS_PER_FILE)]
        write_deltalake(
            str(root), pa.table({"key": keys, "n": list(range(ROWS_PER_FILE))}), mode="append"
        )


def filtered_count(df: DataFrame) -> tuple[object, ...]:
    return (df.filter(F.col("key").startswith(PREFIX)).count(),)


def main() -> None:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        write_table(work / "table")
        process, endpoint = start_server(work / "table", work)
        profile = work / "bench.share"
        profile.write_text(
            json.dumps({"shareCredentialsVersion": 1, "endpoint": endpoint, "bearerToken": TOKEN})
        )
        spark = (
            SparkSession.builder.master("local[2]")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.python.filterPushdown.enabled", "true")
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("ERROR")
        deltaport.spark.register(spark)
        url = f"{profile}#b.s.t"

        def reader(hints: bool) -> DataFrame:
            options = {"jsonPredicateHints": str(hints).lower(), "partitionBytes": "0"}
            return spark.read.format("deltaSharing").options(**options).load(url)

        try:
            # one partition a file (partitionBytes=0): the partitions are the files read
            files = [
                reader(h).filter(F.col("key").startswith(PREFIX)).rdd.getNumPartitions()
                for h in (False, True)
            ]
            (t_all, r_all), (t_hinted, r_hinted) = best_of_alternating(
                RUNS, [lambda: filtered_count(reader(False)), lambda: filtered_count(reader(True))]
            )
        finally:
            spark.stop()
            process.terminate()
            process.wait(10)
    assert r_all == r_hinted == (ROWS_PER_FILE,), (r_all, r_hinted)
    print(f"table: {N_FILES} files of {ROWS_PER_FILE:,} rows; filter key startsWith {PREFIX!r}")
    print(f"files read without hints: {files[0]}, with hints: {files[1]}")
    print(f"count without hints: {t_all:.2f} s")
    print(f"count with hints:    {t_hinted:.2f} s")
    print(f"ratio (without / with hints): {t_all / t_hinted:.1f}x")


if __name__ == "__main__":
    main()
