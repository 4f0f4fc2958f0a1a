"""``TableHandle.files_since``: the files each version of a range added or removed
(``/query`` with ``startingVersion``), checked against the table's own Delta log."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

import deltaport.client as dc
import sharing_server as server_process
from client_support import write_profile

SCHEMA_CHANGE_VERSION = 3
OPTIMIZE_VERSION = 4
LATEST = 4


def _rows(ids: range, with_tag: bool = False) -> pa.Table:
    columns: dict[str, Any] = {"id": pa.array(ids, pa.int64())}
    if with_tag:
        columns["tag"] = pa.array([f"t{i}" for i in ids])
    return pa.table(columns)


def write_history(root: Path) -> Path:
    """v0, v1 appends; v2 a delete (rewrites a file); v3 an append that adds a column
    (a metadata change); v4 a compaction (files with dataChange false). The change
    data feed is on."""
    cdf = {"delta.enableChangeDataFeed": "true"}
    write_deltalake(str(root), _rows(range(0, 10)), mode="append", configuration=cdf)
    write_deltalake(str(root), _rows(range(10, 20)), mode="append")
    DeltaTable(str(root)).delete("id < 3")
    write_deltalake(str(root), _rows(range(20, 25), True), mode="append", schema_mode="merge")
    DeltaTable(str(root)).optimize.compact()
    assert DeltaTable(str(root)).version() == LATEST
    return root


def log_actions(root: Path, version: int) -> list[dict[str, Any]]:
    """The add and remove actions of one commit, as written in the log."""
    path = root / "_delta_log" / f"{version:020d}.json"
    out = []
    for line in path.read_text().splitlines():
        action = json.loads(line)
        for kind in ("add", "remove"):
            if kind in action:
                out.append({"action": kind, "version": version, **action[kind]})
    return out


def expected_files(root: Path, start: int, end: int, *, all_files: bool) -> Counter[Any]:
    """(version, action, size, dataChange) of the range's files; without ``all_files``
    only those with dataChange (what the parquet response format carries)."""
    found: Counter[Any] = Counter()
    for version in range(start, end + 1):
        for a in log_actions(root, version):
            if all_files or a["dataChange"]:
                found[(version, a["action"], a.get("size"), a["dataChange"])] += 1
    return found


def got_files(plan: dc.ScanPlan) -> Counter[Any]:
    return Counter((f.version, f.action, f.size, f.data_change) for f in plan.files)


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_history(tmp_path_factory.mktemp("files-since") / "history")


@pytest.fixture(scope="module")
def client(history: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dc.SharingClient]:
    config = {
        "version": 1,
        "authorization": {"bearerToken": "${DELTAPORT_TEST_TOKEN}"},
        "signingKey": "files-since-signing-key",
        "shares": [
            {
                "name": "s",
                "schemas": [
                    {
                        "name": "d",
                        "tables": [
                            server_process.table_entry("history", history, historyShared=True),
                            server_process.table_entry("nohistory", history),
                        ],
                    }
                ],
            }
        ],
    }
    work = tmp_path_factory.mktemp("files-since-server")
    running = server_process.start_server(config, work)
    client = dc.SharingClient(write_profile(work / "p.share", running.url))
    try:
        yield client
    finally:
        client.close()
        server_process.stop_server(running)


@pytest.fixture(scope="module")
def table(client: dc.SharingClient) -> dc.TableHandle:
    return client.table("s.d.history")


@pytest.mark.parametrize("fmt", [False, True], ids=["parquet", "delta"])
def test_files_of_every_version_match_the_log(table, history, fmt):
    plan = table.files_since(0, use_delta_format=fmt)
    assert got_files(plan) == expected_files(history, 0, LATEST, all_files=fmt)
    assert not plan.cdf
    assert plan.response_format == ("delta" if fmt else "parquet")
    versions = [f.version for f in plan.files]
    assert versions == sorted(versions)
    assert all(f.timestamp is not None for f in plan.files)


def test_delta_format_reports_modification_times(table, history):
    plan = table.files_since(0, 1, use_delta_format=True)
    expected = sorted(a["modificationTime"] for v in (0, 1) for a in log_actions(history, v))
    assert sorted(f.modification_time for f in plan.files) == expected
    assert all(f.action == "add" and f.data_change for f in plan.files)


def test_compaction_files_are_marked_as_no_data_change(table):
    plan = table.files_since(OPTIMIZE_VERSION, use_delta_format=True)
    assert plan.files
    assert not any(f.data_change for f in plan.files)
    assert {f.action for f in plan.files} == {"add", "remove"}
    assert not table.files_since(OPTIMIZE_VERSION, use_delta_format=False).files


def test_an_ending_version_bounds_the_range(table, history):
    plan = table.files_since(1, 2, use_delta_format=False)
    assert got_files(plan) == expected_files(history, 1, 2, all_files=False)
    assert {f.version for f in plan.files} == {1, 2}


def test_metadata_changes_of_the_range(table):
    plan = table.files_since(0)
    changed = [version for version, _ in plan.metadata_changes]
    assert SCHEMA_CHANGE_VERSION in changed
    assert changed == sorted(changed)
    assert plan.metadata == plan.metadata_changes[-1][1]
    assert "tag" in plan.metadata.schema_string
    before = table.files_since(0, SCHEMA_CHANGE_VERSION - 1)
    assert "tag" not in before.metadata.schema_string
    assert all(v < SCHEMA_CHANGE_VERSION for v, _ in before.metadata_changes)


def test_change_data_plans_list_their_metadata_changes(table):
    plan = table.changes(starting_version=0).plan()
    assert SCHEMA_CHANGE_VERSION in [version for version, _ in plan.metadata_changes]
    assert plan.metadata == plan.metadata_changes[-1][1]
    assert not table.snapshot().plan().metadata_changes


def test_pages_of_one_file_give_the_same_plan(table):
    whole = table.files_since(0, use_delta_format=True)
    paged = table.files_since(0, use_delta_format=True, max_files=1)
    assert [f.key for f in paged.files] == [f.key for f in whole.files]
    assert paged.metadata_changes == whole.metadata_changes


@pytest.mark.parametrize("fmt", [False, True], ids=["parquet", "delta"])
def test_the_plan_refreshes_and_its_files_read(table, fmt):
    plan = table.files_since(0, 1, use_delta_format=fmt)
    fresh = table.refresh_plan(plan)
    assert [f.key for f in fresh.files] == [f.key for f in plan.files]
    http = dc.new_http_client()
    try:
        batches = [
            batch
            for f in fresh.files
            if not dc.is_expired(f)
            for batch in dc.read_remote_file(f, fresh, http=http)
        ]
    finally:
        http.close()
    assert len(batches) == len(fresh.files) == 2
    ids = sorted(v for b in batches for v in b.column("id").to_pylist())
    assert ids == list(range(20))


def test_a_table_without_history_is_refused(client):
    with pytest.raises(dc.SharingError) as error:
        client.table("s.d.nohistory").files_since(0)
    assert (error.value.status, error.value.error_code) == (400, "INVALID_PARAMETER_VALUE")
    assert "does not share its history (historyShared is off)" in str(error.value)
