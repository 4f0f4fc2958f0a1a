"""Row diff speed: deltaport's row diff against a full comparison of the two tables.

Writes (once, kept under ``.cache/bench_row_diff``) a Delta table of ``N_FILES`` files of
``ROWS_PER_FILE`` rows with deltalake, and a branch (a copy) in which 1% of the rows
changed in a few files: an update of half a file, a delete of a quarter of another, an
append. Then, in one run:

- deltaport's Arrow row diff against a full comparison in pyarrow (both tables' active
  files read with ``pyarrow.dataset``, a full outer join on the key, every column
  compared), each measured in a child process of its own for its peak memory (ru_maxrss);
- the Spark engine (``diff_rows(engine="spark")``) against plain Spark reading both
  tables' active files with ``spark.read.parquet``, joining them on the key and collecting
  the changed rows, in one SparkSession (``local[2]``) after one warm-up of each.

The two sides of each pair alternate, ``ROUNDS`` rounds; medians are reported.
Run: ``uv run python benchmarks/bench_row_diff.py``.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pds
from deltalake import DeltaTable, write_deltalake

N_FILES = 100
ROWS_PER_FILE = 100_000
ROUNDS = 3
CACHE = Path(__file__).resolve().parent.parent / ".cache" / "bench_row_diff"
LEFT, RIGHT = CACHE / "main", CACHE / "branch"
VALUES = ("a", "x", "s")


def _rows(start: int, count: int, tag: str) -> pa.Table:
    ids = np.arange(start, start + count, dtype=np.int64)
    return pa.table(
        {
            "id": ids,
            "a": (ids % 1000).astype(np.int32),
            "x": ids * 0.5,
            "s": pa.array([f"{tag}-{i % 5000}" for i in range(count)]),
        }
    )


def build() -> None:
    """The table and its branch, unless a complete pair is cached."""
    if (CACHE / "done").exists():
        return
    shutil.rmtree(CACHE, ignore_errors=True)
    for i in range(N_FILES):
        write_deltalake(str(LEFT), _rows(i * ROWS_PER_FILE, ROWS_PER_FILE, "v0"), mode="append")
    shutil.copytree(LEFT, RIGHT)
    branch = DeltaTable(str(RIGHT))
    total = N_FILES * ROWS_PER_FILE
    half, quarter = ROWS_PER_FILE // 2, ROWS_PER_FILE // 4
    branch.update(predicate=f"id < {half}", updates={"s": "'updated'"})
    middle = total // 2
    branch.delete(f"id >= {middle} AND id < {middle + quarter}")
    write_deltalake(str(RIGHT), _rows(total, quarter, "new"), mode="append")
    (CACHE / "done").touch()


def active_files(path: Path) -> list[str]:
    return [str(path / p) for p in DeltaTable(str(path)).file_uris()]


# -- measurements in a child process ---------------------------------------------------
def arrow_row_diff() -> int:
    from deltaport.diff.rows.row_diff import diff_rows

    diff = diff_rows(str(LEFT), str(RIGHT), key=["id"], limit=10)
    return diff.changes.num_rows


def pyarrow_full() -> int:
    left = pds.dataset(active_files(LEFT)).to_table()
    right = pds.dataset(active_files(RIGHT)).to_table()
    joined = left.join(right, "id", join_type="full outer", right_suffix="_r")
    only_one = pc.or_(pc.is_null(joined.column("a")), pc.is_null(joined.column("a_r")))
    differs = only_one
    for name in VALUES:
        same = pc.fill_null(pc.equal(joined.column(name), joined.column(f"{name}_r")), False)
        differs = pc.or_(differs, pc.invert(same))
    return joined.filter(differs).num_rows


CHILD_MEASURES: dict[str, Callable[[], int]] = {
    "arrow_row_diff": arrow_row_diff,
    "pyarrow_full": pyarrow_full,
}


def measure_in_child(name: str) -> tuple[float, float, int]:
    """Seconds, peak resident MiB and changed rows of one measurement in a new process."""
    out = subprocess.run(
        [sys.executable, __file__, "--child", name], check=True, capture_output=True, text=True
    ).stdout
    result = json.loads(out.splitlines()[-1])
    return result["seconds"], result["peak_mib"], result["rows"]


def child(name: str) -> None:
    start = time.perf_counter()
    rows = CHILD_MEASURES[name]()
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "peak_mib": peak, "rows": rows}))


# -- Spark -----------------------------------------------------------------------------
def spark_measures() -> dict[str, list[float]]:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    from deltaport.diff.rows.row_diff import diff_rows

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "6g")
        .config("spark.sql.shuffle.partitions", "8")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")

    def engine() -> int:
        return diff_rows(
            str(LEFT), str(RIGHT), key=["id"], engine="spark", limit=10
        ).changes.num_rows

    def plain() -> int:
        left = spark.read.parquet(*active_files(LEFT)).alias("l")
        right = spark.read.parquet(*active_files(RIGHT)).alias("r")
        joined = left.join(right, F.col("l.id").eqNullSafe(F.col("r.id")), "full_outer")
        differs = F.col("l.id").isNull() | F.col("r.id").isNull()
        for name in VALUES:
            differs = differs | ~F.col(f"l.{name}").eqNullSafe(F.col(f"r.{name}"))
        return joined.where(differs).toArrow().num_rows

    times: dict[str, list[float]] = {"spark_engine": [], "spark_plain": []}
    for run in (engine, plain):
        run()  # warm-up
    for _ in range(ROUNDS):
        for name, run in (("spark_plain", plain), ("spark_engine", engine)):
            start = time.perf_counter()
            rows = run()
            times[name].append(time.perf_counter() - start)
            print(f"  {name}: {times[name][-1]:.2f} s ({rows} changed rows)", flush=True)
    spark.stop()
    return times


def main() -> None:
    started = time.perf_counter()
    build()
    print(
        f"table: {N_FILES} files x {ROWS_PER_FILE:,} rows; built in "
        f"{time.perf_counter() - started:.0f} s (cached under {CACHE})"
    )
    seconds: dict[str, list[float]] = {"arrow_row_diff": [], "pyarrow_full": []}
    peaks: dict[str, list[float]] = {"arrow_row_diff": [], "pyarrow_full": []}
    for _ in range(ROUNDS):
        for name in ("pyarrow_full", "arrow_row_diff"):
            s, peak, rows = measure_in_child(name)
            seconds[name].append(s)
            peaks[name].append(peak)
            print(f"  {name}: {s:.2f} s, peak {peak:.0f} MiB ({rows} changed rows)", flush=True)
    spark = spark_measures()
    med = {k: statistics.median(v) for k, v in {**seconds, **spark}.items()}
    print()
    print(
        f"deltaport Arrow row diff   {med['arrow_row_diff']:7.2f} s  "
        f"peak {statistics.median(peaks['arrow_row_diff']):6.0f} MiB"
    )
    print(
        f"pyarrow full comparison    {med['pyarrow_full']:7.2f} s  "
        f"peak {statistics.median(peaks['pyarrow_full']):6.0f} MiB"
    )
    print(
        f"  -> deltaport Arrow is {med['pyarrow_full'] / med['arrow_row_diff']:.1f}x faster "
        "than the full comparison in pyarrow (target >= 10x)"
    )
    print(f"Spark full comparison      {med['spark_plain']:7.2f} s")
    print(
        f"  -> deltaport Arrow is {med['spark_plain'] / med['arrow_row_diff']:.1f}x faster "
        "than the full comparison in Spark"
    )
    print(f"deltaport Spark engine     {med['spark_engine']:7.2f} s")
    print(
        f"  -> the Spark engine is {med['spark_plain'] / med['spark_engine']:.1f}x faster "
        "than spark.read.parquet of both tables + join"
    )


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(sys.argv[2])
    else:
        main()
