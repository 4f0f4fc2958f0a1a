"""Incrementally copy a shared table into a local parquet replica with Spark, from its
change data feed: each run applies the changes committed since the previous run.

Against the demo server (in another shell: ``uv run deltaport demo --dir demo-data``):

    uv run python examples/spark_cdf_pipeline.py \\
        "demo-data/profile.share#demo.sales.orders" --key order_id --target replica

Run it again after new commits: the checkpoint makes it pick up where it stopped.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

import deltaport.spark

CDF_COLUMNS = ("_change_type", "_commit_version", "_commit_timestamp")


def session() -> SparkSession:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("deltaport-cdf-pipeline")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    deltaport.spark.register(spark)
    return spark


class Replica:
    """A parquet copy of the table: one folder per applied micro-batch, the newest wins."""

    def __init__(self, root: Path, key: str) -> None:
        self.root = root
        self.key = key
        root.mkdir(parents=True, exist_ok=True)

    def current(self) -> Path | None:
        versions = sorted(self.root.glob("batch-*"), key=lambda p: int(p.name[6:]))
        return versions[-1] if versions else None

    def apply(self, changes: DataFrame, batch_id: int) -> None:
        """Upsert inserts and post-images, drop deletes (the last change of a key wins)."""
        spark = changes.sparkSession
        last = Window.partitionBy(self.key).orderBy(
            F.col("_commit_version").desc(),
            F.when(F.col("_change_type") == "delete", 0).otherwise(1).desc(),
        )
        latest = (
            changes.filter(F.col("_change_type") != "update_preimage")
            .withColumn("_rank", F.row_number().over(last))
            .filter("_rank = 1")
            .drop("_rank")
        )
        upserts = latest.filter(F.col("_change_type") != "delete").drop(*CDF_COLUMNS)
        previous = self.current()
        if previous is not None:
            kept = spark.read.parquet(str(previous)).join(
                latest.select(self.key), self.key, "left_anti"
            )
            upserts = kept.unionByName(upserts)
        target = self.root / f"batch-{batch_id}"
        shutil.rmtree(target, ignore_errors=True)
        upserts.write.parquet(str(target))
        if previous is not None and previous != target:
            shutil.rmtree(previous)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("table", help="<profile file>#<share>.<schema>.<table>")
    parser.add_argument("--key", required=True, help="primary key column")
    parser.add_argument("--target", default="replica", help="where the replica goes")
    parser.add_argument("--starting-version", default="0")
    parser.add_argument("--max-files-per-trigger", default="100")
    args = parser.parse_args()

    spark = session()
    target = Path(args.target).resolve()
    replica = Replica(target / "data", args.key)
    query = (
        spark.readStream.format("deltaSharing")
        .option("readChangeFeed", "true")
        .option("startingVersion", args.starting_version)
        .option("maxFilesPerTrigger", args.max_files_per_trigger)
        .load(args.table)
        .writeStream.foreachBatch(replica.apply)
        .option("checkpointLocation", str(target / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination()
    current = replica.current()
    if current is None:
        print("no changes to apply")
        return
    rows = spark.read.parquet(str(current)).orderBy(args.key)
    print(f"replica at {current} ({rows.count()} rows):")
    rows.show(truncate=False)


if __name__ == "__main__":
    main()
