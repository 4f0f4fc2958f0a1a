"""Reading tables from a real deltaport server process: both response formats, time
travel, predicates, limits, the three dataframe outputs, and the table handle API."""

from __future__ import annotations

import json
import pickle
import threading
import time
from pathlib import Path

import deltalake
import polars as pl
import pyarrow as pa
import pytest
from compare import assert_same_rows, direct_read, sorted_rows

import deltaport.client as dc
from client_support import CDF_TABLES
from deltaport.client import FileReader, SharingClient, SharingError, read_remote_file
from deltaport.client.files import scan as scan_module
from deltaport.read import FileRows

TABLES = ["parted", "small_files", "basic", "dv", "cm"]
NEEDS_DELTA = {"dv", "cm"}


def url(profile: Path, table: str, schema: str = "default") -> str:
    return f"{profile}#share1.{schema}.{table}"


@pytest.mark.parametrize("fmt", [None, True, False], ids=["auto", "delta", "parquet"])
@pytest.mark.parametrize("table", TABLES)
def test_reads_equal_the_table_on_disk(profile, client_tables, table, fmt):
    if fmt is False and table in NEEDS_DELTA:
        with pytest.raises(SharingError) as info:
            dc.load_as_arrow(url(profile, table), use_delta_format=False)
        assert info.value.status == 400
        assert info.value.error_code == "UNSUPPORTED_OPERATION"
        return
    got = dc.load_as_arrow(url(profile, table), use_delta_format=fmt)
    assert_same_rows(got, direct_read(client_tables[table]))


@pytest.mark.parametrize("table", ["parted", "small_files", "basic"])
def test_reads_equal_deltalake(profile, client_tables, table):
    got = dc.load_as_arrow(url(profile, table))
    expected = pa.table(deltalake.DeltaTable(str(client_tables[table])).to_pyarrow_table())
    expected = expected.select(got.schema.names).cast(got.schema)
    assert sorted_rows(got) == sorted_rows(expected)


def test_auto_format_uses_parquet_unless_the_table_needs_delta(profile):
    with SharingClient(profile) as client:
        assert client.table("share1.default.parted").snapshot().plan().response_format == "parquet"
        assert client.table("share1.default.dv").snapshot().plan().response_format == "delta"


def test_deletion_vectors_drop_rows(profile, client_tables):
    got = dc.load_as_arrow(url(profile, "dv"))
    with SharingClient(profile) as client:
        plan = client.table("share1.default.dv").snapshot().plan()
    assert any(f.deletion_vector is not None for f in plan.files)
    stats_rows = sum(json.loads(f.stats)["numRecords"] for f in plan.files)
    assert got.num_rows < stats_rows


@pytest.mark.parametrize("fmt", [True, False])
@pytest.mark.parametrize("version", [0, 1, 2])
def test_time_travel_by_version(profile, client_tables, version, fmt):
    got = dc.load_as_arrow(url(profile, "parted"), version=version, use_delta_format=fmt)
    assert_same_rows(got, direct_read(client_tables["parted"], version))
    expected = pa.table(
        deltalake.DeltaTable(str(client_tables["parted"]), version=version).to_pyarrow_table()
    )
    assert got.num_rows == expected.num_rows


def test_time_travel_by_timestamp(profile, client_tables):
    # parted: commit v at 2024-01-01 + v hours
    got = dc.load_as_arrow(url(profile, "parted"), timestamp="2024-01-01T01:30:00Z")
    assert_same_rows(got, direct_read(client_tables["parted"], 1))


def test_table_version_and_metadata(profile):
    assert dc.get_table_version(url(profile, "parted")) == 2
    assert dc.get_table_version(url(profile, "parted"), "2024-01-01T00:30:00Z") == 1
    metadata = dc.get_table_metadata(url(profile, "parted"))
    assert metadata.partition_columns == ("region",)
    assert [f["name"] for f in json.loads(metadata.schema_string)["fields"]] == [
        "id",
        "region",
        "value",
    ]
    protocol = dc.get_table_protocol(url(profile, "dv"))
    assert protocol.reader_features is not None and "deletionVectors" in protocol.reader_features


def _equal(column: str, value: str, value_type: str) -> str:
    return json.dumps(
        {
            "op": "equal",
            "children": [
                {"op": "column", "name": column, "valueType": value_type},
                {"op": "literal", "value": value, "valueType": value_type},
            ],
        }
    )


@pytest.mark.parametrize("fmt", [True, False])
def test_partition_predicate_filters_rows(profile, fmt):
    got = dc.load_as_arrow(
        url(profile, "parted"),
        jsonPredicateHints=_equal("region", "us", "string"),
        use_delta_format=fmt,
    )
    assert got.num_rows == 5
    assert set(got.column("region").to_pylist()) == {"us"}


def test_data_column_predicate_is_applied_to_rows(profile):
    """The server can only skip files; the client drops the other rows of kept files."""
    predicate = json.dumps(
        {
            "op": "lessThan",
            "children": [
                {"op": "column", "name": "id", "valueType": "long"},
                {"op": "literal", "value": "12", "valueType": "long"},
            ],
        }
    )
    got = dc.load_as_arrow(url(profile, "parted"), jsonPredicateHints=predicate)
    assert sorted(got.column("id").to_pylist()) == [0, 1, 2, 3, 4, 10, 11]


@pytest.mark.parametrize("limit", [0, 1, 7, 51, 10_000])
def test_limit_is_applied_to_rows(profile, limit):
    got = dc.load_as_arrow(url(profile, "small_files"), limit=limit)
    assert got.num_rows == min(limit, 2000)
    assert got.schema.names == ["id", "part", "x"]


def test_pandas_and_polars_hold_the_same_rows(profile):
    table = dc.load_as_arrow(url(profile, "parted"))
    frame = dc.load_as_pandas(url(profile, "parted"))
    assert sorted(frame["id"].tolist()) == sorted(table.column("id").to_pylist())
    assert list(frame.columns) == ["id", "region", "value"]
    polars_frame = dc.load_as_polars(url(profile, "parted"))
    assert isinstance(polars_frame, pl.DataFrame)
    assert sorted(polars_frame["id"].to_list()) == sorted(table.column("id").to_pylist())


def test_empty_result_keeps_the_schema(profile):
    frame = dc.load_as_pandas(url(profile, "parted"), limit=0)
    assert list(frame.columns) == ["id", "region", "value"] and len(frame) == 0


def test_listing(profile):
    with SharingClient(profile) as client:
        assert [s.name for s in client.list_shares()] == ["share1", "share2"]
        schemas = client.list_schemas(dc.Share("share1"))
        assert [s.name for s in schemas] == ["default", "other", "cdf"]
        assert [t.name for t in client.list_tables(schemas[1])] == ["again"]
        names = [t.full_name for t in client.list_all_tables()]
        cdf = [f"share1.cdf.{alias}" for alias in CDF_TABLES]
        assert names == [f"share1.default.{t}" for t in TABLES] + ["share1.other.again", *cdf]


def test_unknown_table_is_a_clear_error(profile):
    with pytest.raises(SharingError) as info:
        dc.load_as_arrow(url(profile, "nope"))
    assert info.value.status == 404
    assert info.value.error_code == "RESOURCE_DOES_NOT_EXIST"


def test_columns_and_batches(profile, client_tables):
    with SharingClient(profile, concurrency=3) as client:
        scan = client.table("share1.default.small_files").snapshot(columns=["x", "id"])
        batches = list(scan.to_batches())
    assert all(b.schema.names == ["x", "id"] for b in batches)
    assert sum(b.num_rows for b in batches) == 2000


def test_files_download_in_parallel_but_decode_one_per_core(profile, client_tables, monkeypatch):
    """With 8 download threads and 2 cores, at most 2 files are decoded at once, while
    more than 2 are fetched at once (one request a file: no batches)."""
    lock = threading.Lock()
    active = {"fetch": 0, "decode": 0}
    peak = {"fetch": 0, "decode": 0}

    def counted(stage, inner, slow):
        def wrapper(self, arg):
            with lock:
                active[stage] += 1
                peak[stage] = max(peak[stage], active[stage])
            try:
                time.sleep(slow)
                result = inner(self, arg)
                if stage == "decode":  # decoded now, within the count
                    return FileRows(result.encoding, iter(list(result.batches)))
                return result
            finally:
                with lock:
                    active[stage] -= 1

        return wrapper

    monkeypatch.setattr(scan_module, "decoders", lambda: 2)
    monkeypatch.setattr(scan_module, "batched_files", lambda files, url: [(f,) for f in files])
    monkeypatch.setattr(FileReader, "fetch", counted("fetch", FileReader.fetch, 0.02))
    monkeypatch.setattr(FileReader, "rows", counted("decode", FileReader.rows, 0.02))
    with SharingClient(profile, concurrency=8) as client:
        got = client.table("share1.default.small_files").snapshot().to_arrow()
    assert got.num_rows == 2000
    assert peak["decode"] == 2
    assert peak["fetch"] > 2


def test_plan_files_read_one_by_one(profile, client_tables):
    """What a Spark executor does: a pickled plan, each file read on its own."""
    with SharingClient(profile) as client:
        plan = client.table("share1.default.dv").snapshot().plan()
    plan = pickle.loads(pickle.dumps(plan))
    batches = [b for f in plan.files for b in read_remote_file(f, plan)]
    assert_same_rows(pa.Table.from_batches(batches), direct_read(client_tables["dv"]))


def test_fetched_files_decode_without_the_network(profile, client_tables):
    """plan_file_reader: fetch() downloads a file and its deletion vector, batches()
    decodes them later, with the HTTP client already closed, in small batches."""
    with SharingClient(profile) as client:
        plan = client.table("share1.default.dv").snapshot().plan()
    http = dc.new_http_client()
    reader = dc.plan_file_reader(plan, http, batch_size=7)
    fetched = [reader.fetch(f) for f in plan.files]
    http.close()
    batches = [b for f in fetched for b in reader.batches(f)]
    assert len(batches) > len(plan.files)
    assert max(b.num_rows for b in batches) <= 7
    assert_same_rows(pa.Table.from_batches(batches), direct_read(client_tables["dv"]))


def test_refresh_plan_gives_new_urls_for_the_same_files(profile):
    with SharingClient(profile) as client:
        handle = client.table("share1.default.parted")
        plan = handle.snapshot().plan()
        fresh = handle.refresh_plan(plan)
    assert [f.id for f in fresh.files] == [f.id for f in plan.files]
    assert fresh.version == plan.version


def test_predicate_on_a_column_not_selected(profile):
    predicate = json.dumps(
        {
            "op": "greaterThanOrEqual",
            "children": [
                {"op": "column", "name": "id", "valueType": "long"},
                {"op": "literal", "value": "1990", "valueType": "long"},
            ],
        }
    )
    with SharingClient(profile) as client:
        scan = client.table("share1.default.small_files").snapshot(
            predicate=predicate, columns=["x"]
        )
        got = scan.to_arrow()
    assert got.schema.names == ["x"]
    assert got.num_rows == 10
