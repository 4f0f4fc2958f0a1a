"""Batch reads through the deltaSharing data source, against a real server."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import SparkSession

from corpus import corpus_table
from spark_support import CORPUS_TABLES, TOKEN, table_url


def sorted_rows(table: pa.Table) -> list[tuple[Any, ...]]:
    columns = [table.column(name).to_pylist() for name in table.column_names]
    return sorted(zip(*columns, strict=True), key=repr) if columns else []


def expected_table(name: str, schema: pa.Schema) -> pa.Table:
    ct = corpus_table(name)
    assert ct.expected_path is not None
    path = ct.expected_path
    if (path / "latest" / "table_content.parquet").exists():
        path = path / "latest" / "table_content.parquet"
    expected = pq.read_table(str(path))
    by_lower = {n.lower(): n for n in expected.column_names}
    return (
        expected.select([by_lower[n.lower()] for n in schema.names])
        .rename_columns(schema.names)
        .cast(schema)
    )


@pytest.mark.parametrize("name", CORPUS_TABLES)
def test_corpus_table_equals_expected(spark: SparkSession, profile: str, name: str) -> None:
    df = spark.read.format("deltaSharing").load(table_url(profile, name))
    got = df.toArrow()
    expected = expected_table(name, got.schema)
    assert got.num_rows == expected.num_rows
    assert sorted_rows(got) == sorted_rows(expected)


def ids(spark: SparkSession, url: str, **options: str) -> list[int]:
    df = spark.read.format("deltaSharing").options(**options).load(url)
    return sorted(r.id for r in df.select("id").collect())


def test_time_travel_by_version_and_timestamp(spark: SparkSession, profile: str) -> None:
    url = table_url(profile, "parted")
    assert ids(spark, url, versionAsOf="0") == list(range(5))
    assert ids(spark, url, versionAsOf="1") == list(range(5)) + list(range(10, 15))
    assert len(ids(spark, url)) == 15
    # commit v is at 2024-01-01 + v hours; the version in force at 01:30 is 1
    assert len(ids(spark, url, timestampAsOf="2024-01-01 01:30:00")) == 10
    assert len(ids(spark, url, timestampAsOf="2024-01-01T00:10:00Z")) == 5


def test_partition_values_and_response_formats(spark: SparkSession, profile: str) -> None:
    url = table_url(profile, "parted")
    for fmt in ("parquet", "delta"):
        df = spark.read.format("deltaSharing").option("responseFormat", fmt).load(url)
        rows = {(r.id, r.region) for r in df.collect()}
        assert (0, "eu") in rows and (12, "us") in rows and (24, "asia") in rows
        assert len(rows) == 15


def test_one_partition_per_file_or_packed(spark: SparkSession, profile: str, server: Any) -> None:
    url = table_url(profile, "parted")
    per_file = spark.read.format("deltaSharing").option("partitionBytes", "0").load(url)
    assert per_file.rdd.getNumPartitions() == 3
    packed = spark.read.format("deltaSharing").option("minPartitions", "1").load(url)
    assert packed.rdd.getNumPartitions() == 1
    batches_before = server.log().count('"POST /delta-sharing/files HTTP')
    assert per_file.count() == packed.count() == 15
    # the packed partition's three small files came in one batch request
    assert server.log().count('"POST /delta-sharing/files HTTP') == batches_before + 1


def test_change_data_feed(spark: SparkSession, profile: str) -> None:
    df = (
        spark.read.format("deltaSharing")
        .option("readChangeFeed", "true")
        .option("startingVersion", "0")
        .load(table_url(profile, "cdf"))
    )
    assert df.columns == ["id", "name", "_change_type", "_commit_version", "_commit_timestamp"]
    rows = sorted((r.id, r._change_type, r._commit_version) for r in df.collect())
    assert rows == [(i, "insert", 0 if i < 3 else 1) for i in range(5)]
    ending = (
        spark.read.format("deltaSharing")
        .options(readChangeFeed="true", startingVersion="1", endingVersion="1")
        .load(table_url(profile, "cdf"))
    )
    assert sorted(r.id for r in ending.collect()) == [3, 4]


def test_inline_profile_options(spark: SparkSession, server: Any) -> None:
    df = (
        spark.read.format("deltaSharing")
        .option("endpoint", server.url)
        .option("bearerToken", TOKEN)
        .load("s.d.parted")
    )
    assert df.count() == 15


def test_filter_then_unfiltered_count_on_one_dataframe(spark: SparkSession, profile: str) -> None:
    """Spark 4.3 keeps a reader planned with pushed filters for later queries of the same
    DataFrame; the unfiltered count after a filtered one must still see every row."""
    df = spark.read.format("deltaSharing").load(table_url(profile, "parted"))
    assert df.filter("region = 'eu'").count() == 5
    assert df.count() == 15
    assert df.filter("id > 20").count() == 4
    assert df.count() == 15


def test_predicate_hints_prune_files(spark: SparkSession, profile: str) -> None:
    url = table_url(profile, "parted")

    def hinted() -> Any:
        return (
            spark.read.format("deltaSharing")
            .options(jsonPredicateHints="true", partitionBytes="0")
            .load(url)
        )

    pruned = hinted().filter("region = 'eu'")
    assert pruned.rdd.getNumPartitions() == 1
    assert sorted(r.id for r in pruned.collect()) == list(range(5))
    assert hinted().filter("region in ('eu', 'us') and id >= 3").count() == 7
    assert hinted().filter("region is null").count() == 0
    assert hinted().count() == 15
    for pushed in ("region like 'e%'", "startswith(region, 'e')", "region <=> 'eu'"):
        filtered = hinted().filter(pushed)
        assert filtered.rdd.getNumPartitions() == 1, pushed
        assert sorted(r.id for r in filtered.collect()) == list(range(5)), pushed


def test_user_schema_must_match(spark: SparkSession, profile: str) -> None:
    df = spark.read.format("deltaSharing").schema("id long").load(table_url(profile, "parted"))
    with pytest.raises(Exception, match="differs from the shared table's schema"):
        df.collect()


def test_bad_option_is_reported(spark: SparkSession, profile: str) -> None:
    df = spark.read.format("deltaSharing").option("versionAsOf", "one")
    with pytest.raises(Exception, match="'versionAsOf' must be an integer"):
        df.load(table_url(profile, "parted")).collect()
