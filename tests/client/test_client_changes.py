"""Change data feed reads through the real server's ``/changes`` route, in both formats,
against deltalake's ``load_cdf`` and deltaport's own reader on disk."""

from __future__ import annotations

import deltalake
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from compare import assert_same_rows, direct_changes, sorted_rows

import deltaport.client as dc
from client_support import CDF_TABLES
from corpus import corpus_table

FORMATS = pytest.mark.parametrize("fmt", [None, True, False], ids=["auto", "delta", "parquet"])
BY_DELTALAKE = ["cdf", "cdf_dv", "cdf_dv_pairs"]
"""deltalake refuses change data under column mapping (cdf_cm)."""


def url(profile, alias):
    return f"{profile}#share1.cdf.{alias}"


def _start(alias: str) -> int:
    return 2 if alias == "cdf_cm" else 0  # CDF is enabled from version 1 there


def _parquet_refused(alias: str, fmt: bool | None) -> bool:
    """Deletion vectors and column mapping need the delta response format."""
    return fmt is False and alias != "cdf"


@pytest.mark.parametrize(
    ("alias", "fmt"),
    [(a, f) for a in BY_DELTALAKE for f in (None, True, False) if not _parquet_refused(a, f)],
)
def test_changes_equal_deltalake(profile, alias, fmt):
    """Every column but ``_commit_timestamp``: deltalake takes it from ``commitInfo``,
    deltaport (like Delta Lake's own reader) from the commit file's time."""
    got = dc.load_table_changes_as_arrow(
        url(profile, alias), starting_version=0, use_delta_format=fmt
    )
    reader = deltalake.DeltaTable(str(corpus_table(CDF_TABLES[alias]).path)).load_cdf(
        starting_version=0
    )
    expected = pa.table(reader.read_all())
    columns = [c for c in got.column_names if c != "_commit_timestamp"]
    assert columns == [c for c in expected.column_names if c != "_commit_timestamp"]
    expected = expected.select(columns).cast(got.select(columns).schema)
    assert got.num_rows > 0
    assert sorted_rows(got.select(columns)) == sorted_rows(expected)


@FORMATS
@pytest.mark.parametrize("alias", list(CDF_TABLES))
def test_changes_equal_the_reader_on_disk(profile, alias, fmt):
    start = _start(alias)
    target = url(profile, alias)
    if _parquet_refused(alias, fmt):
        with pytest.raises(dc.SharingError) as info:
            dc.load_table_changes_as_arrow(target, starting_version=start, use_delta_format=fmt)
        assert info.value.status == 400
        return
    got = dc.load_table_changes_as_arrow(target, starting_version=start, use_delta_format=fmt)
    assert got.num_rows > 0
    assert_same_rows(got, direct_changes(corpus_table(CDF_TABLES[alias]).path, start))


def test_changes_of_a_range(profile):
    got = dc.load_table_changes_as_arrow(url(profile, "cdf"), starting_version=1, ending_version=2)
    assert set(got.column("_commit_version").to_pylist()) == {1, 2}
    assert_same_rows(got, direct_changes(corpus_table("drs__cdf-table").path, 1, 2))


def test_changes_as_pandas_and_polars(profile):
    frame = dc.load_table_changes_as_pandas(url(profile, "cdf"), starting_version=0)
    assert {"_change_type", "_commit_version", "_commit_timestamp"} <= set(frame.columns)
    polars_frame = dc.load_table_changes_as_polars(url(profile, "cdf"), starting_version=0)
    assert len(polars_frame) == len(frame) > 0


def test_update_images_come_from_cdc_files(profile):
    got = dc.load_table_changes_as_arrow(url(profile, "cdf"), starting_version=0)
    kinds = set(got.column("_change_type").to_pylist())
    assert {"insert", "update_preimage", "update_postimage"} <= kinds
    assert pc.all(pc.is_valid(got.column("_commit_timestamp"))).as_py()


def test_changes_need_a_start(profile):
    with pytest.raises(ValueError, match="starting_version"):
        dc.load_table_changes_as_arrow(url(profile, "cdf"))


def test_changes_of_some_columns(profile):
    with dc.SharingClient(profile) as client:
        got = client.table("share1.cdf.cdf").changes(starting_version=0, columns=["id"]).to_arrow()
    assert got.schema.names == ["id", "_change_type", "_commit_version", "_commit_timestamp"]
    expected = direct_changes(corpus_table("drs__cdf-table").path, 0)
    assert got.num_rows == expected.num_rows
