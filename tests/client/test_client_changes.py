"""Change data feed reads (through the test server's ``/changes``), in both formats,
against deltaport's own reader and deltalake's ``load_cdf``."""

from __future__ import annotations

import deltalake
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from compare import assert_same_rows, direct_changes, sorted_rows

import deltaport.client as dc
from client_support import CDF_TABLES
from corpus import corpus_table


def url(profile, alias):
    return f"{profile}#share1.default.{alias}"


@pytest.mark.parametrize(
    ("alias", "fmt"),
    [
        ("cdf", False),
        ("cdf", True),
        ("cdf", None),
        ("cdf_dv", None),
        ("cdf_cm", True),
        ("cdf_dv_pairs", True),
    ],
)
def test_changes_equal_the_reader_on_disk(proxy, proxy_profile, alias, fmt):
    start = 2 if alias == "cdf_cm" else 0  # CDF is enabled from version 1 there
    got = dc.load_table_changes_as_arrow(
        url(proxy_profile, alias), starting_version=start, use_delta_format=fmt
    )
    expected = direct_changes(corpus_table(CDF_TABLES[alias]).path, start)
    assert got.num_rows > 0
    assert_same_rows(got, expected)


def test_changes_of_a_range(proxy, proxy_profile):
    got = dc.load_table_changes_as_arrow(
        url(proxy_profile, "cdf"), starting_version=1, ending_version=2
    )
    assert set(got.column("_commit_version").to_pylist()) <= {1, 2}
    assert_same_rows(got, direct_changes(corpus_table("drs__cdf-table").path, 1, 2))


def test_changes_equal_deltalake(proxy, proxy_profile):
    got = dc.load_table_changes_as_arrow(url(proxy_profile, "cdf"), starting_version=0)
    reader = deltalake.DeltaTable(str(corpus_table("drs__cdf-table").path)).load_cdf(
        starting_version=0
    )
    expected = pa.table(reader.read_all())
    columns = [c for c in got.column_names if c != "_commit_timestamp"]
    expected = expected.select(columns).cast(got.select(columns).schema)
    assert sorted_rows(got.select(columns)) == sorted_rows(expected)


def test_changes_as_pandas_and_polars(proxy, proxy_profile):
    frame = dc.load_table_changes_as_pandas(url(proxy_profile, "cdf"), starting_version=0)
    assert {"_change_type", "_commit_version", "_commit_timestamp"} <= set(frame.columns)
    polars_frame = dc.load_table_changes_as_polars(url(proxy_profile, "cdf"), starting_version=0)
    assert len(polars_frame) == len(frame)


def test_update_images_come_from_cdc_files(proxy, proxy_profile):
    got = dc.load_table_changes_as_arrow(url(proxy_profile, "cdf"), starting_version=0)
    kinds = set(got.column("_change_type").to_pylist())
    assert {"insert", "update_preimage", "update_postimage"} <= kinds
    assert pc.all(pc.is_valid(got.column("_commit_timestamp"))).as_py()


def test_changes_need_a_start(proxy_profile):
    with pytest.raises(ValueError, match="starting_version"):
        dc.load_table_changes_as_arrow(url(proxy_profile, "cdf"))


@pytest.mark.parametrize("fmt", [None, True, False], ids=["auto", "delta", "parquet"])
@pytest.mark.parametrize("alias", list(CDF_TABLES))
def test_changes_from_the_real_server(profile, alias, fmt):
    """The same reads against the deltaport server's own ``/changes`` route."""
    path = corpus_table(CDF_TABLES[alias]).path
    start = 2 if alias == "cdf_cm" else 0
    expected = direct_changes(path, start)
    target = f"{profile}#share1.cdf.{alias}"
    if fmt is False and alias != "cdf":
        with pytest.raises(dc.SharingError) as info:
            dc.load_table_changes_as_arrow(target, starting_version=start, use_delta_format=fmt)
        assert info.value.status == 400
        return
    got = dc.load_table_changes_as_arrow(target, starting_version=start, use_delta_format=fmt)
    assert_same_rows(got, expected)


def test_changes_of_some_columns(profile):
    with dc.SharingClient(profile) as client:
        got = client.table("share1.cdf.cdf").changes(starting_version=0, columns=["id"]).to_arrow()
    assert got.schema.names == ["id", "_change_type", "_commit_version", "_commit_timestamp"]
    expected = direct_changes(corpus_table("drs__cdf-table").path, 0)
    assert got.num_rows == expected.num_rows
