"""The row diff of tables shared with the caller: two versions of one shared table (read
through a real deltaport server), and a shared table against a table in storage."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake

from deltaport.diff.rows.row_diff import diff_rows
from rowcheck import actual_changes, expected_changes, full_table
from sharing_server import TOKEN, RunningServer, start_server, stop_server


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("shared") / "orders"
    for start in range(0, 400, 100):
        ids = list(range(start, start + 100))
        write_deltalake(
            str(path),
            pa.table({"id": ids, "kind": ["a" if i % 3 else "b" for i in ids]}),
            mode="append",
            partition_by=["kind"],
        )
    DeltaTable(str(path)).update(predicate="id < 10", updates={"kind": "'c'"})
    DeltaTable(str(path)).delete("id >= 390")
    return path


@pytest.fixture(scope="module")
def profile(table: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    config = {
        "authorization": {"bearerToken": TOKEN},
        "shares": [
            {
                "name": "s",
                "schemas": [
                    {
                        "name": "d",
                        "tables": [
                            {"name": "orders", "location": str(table), "historyShared": True}
                        ],
                    }
                ],
            }
        ],
    }
    server: RunningServer = start_server(config, tmp_path_factory.mktemp("shared-server"))
    path = tmp_path_factory.mktemp("profile") / "p.share"
    path.write_text(
        json.dumps({"shareCredentialsVersion": 1, "endpoint": server.url, "bearerToken": TOKEN})
    )
    yield path
    stop_server(server)


def test_two_versions_of_a_shared_table(profile: Path, table: Path) -> None:
    url = f"{profile}#s.d.orders"
    diff = diff_rows(url, url, key=["id"], left_version=3, right_version=5)
    expected = expected_changes(
        full_table(str(table), 3), full_table(str(table), 5), ["id"], ["id", "kind"]
    )
    assert actual_changes(diff) == expected
    assert (diff.summary.updated, diff.summary.deleted) == (10, 10)
    assert not diff.summary.full_comparison
    # only what the update and the delete rewrote is read, not the four appended files
    assert diff.summary.files_read_left < 4 + 2


def test_a_shared_table_against_a_table_in_storage(profile: Path, table: Path) -> None:
    url = f"{profile}#s.d.orders"
    diff = diff_rows(str(table), url, key=["id"], left_version=2)
    expected = expected_changes(
        full_table(str(table), 2), full_table(str(table)), ["id"], ["id", "kind"]
    )
    assert actual_changes(diff) == expected
    assert diff.summary.full_comparison
