"""The Spark connector's batch read through an asynchronous query (``asyncQuery``): the
driver polls the server's query until its files are ready, the rows are the table's."""

from __future__ import annotations

from pathlib import Path

from deltalake import DeltaTable
from pyspark.sql import SparkSession

from async_support import make_lake, running
from corpus import corpus_table


def test_a_batch_read_through_an_async_query(spark: SparkSession, tmp_path: Path) -> None:
    lake = make_lake(tmp_path)
    with running(lake) as server:
        profile = server.profile()
        df = (
            spark.read.format("deltaSharing")
            .option("endpoint", profile.endpoint)
            .option("bearerToken", profile.bearer_token)
            .option("asyncQuery", "true")
            .load("s.sc.basic")
        )
        rows = sorted(tuple(r) for r in df.collect())
        assert server.queries.count("alice") == 1
    expected = DeltaTable(str(corpus_table("dat__basic_append").path)).to_pyarrow_table()
    assert rows == sorted(tuple(r.values()) for r in expected.to_pylist())
