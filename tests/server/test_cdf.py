"""Change data feed over HTTP against a real server: deltalake-written and corpus tables,
compared with deltalake's ``load_cdf``; gating and errors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from corpus import corpus_table
from deltaport.client import load_table_changes_as_arrow
from deltaport.protocol.file_batch import HEADER as FILE_BATCH_HEADER
from history_tables import (
    DELTA_CAPS,
    change_rows,
    changes,
    deltalake_change_rows,
    history_config,
    lines_of,
    row_key,
    with_all_columns,
    write_cdf_table,
    write_evolving_table,
    write_late_cdf_table,
    write_token_profile,
)
from sharing_server import RunningServer, start_server, stop_server

CORPUS = {
    "drs_cdf": "drs__cdf-table",
    "drs_cdf_np": "drs__cdf-table-non-partitioned",
    "update_ops": "krs__cdf-table-update-ops",
    "ckpt_cdf": "drs__checkpoint-cdf-table",
    "cdf_dv": "krs__cdf-table-with-dv",
    "cdc_dv": "drs__cdf-table-with-cdc-and-dvs",
    "cm_name": "krs__cdf-column-mapping-name-mode",
    "cm_id": "krs__cdf-column-mapping-id-mode",
    "fake_paths": "krs__table-with-cdf",
}


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("cdf-tables")
    own = {
        "cdf": write_cdf_table(root / "cdf"),
        "late": write_late_cdf_table(root / "late"),
        "evolving": write_evolving_table(root / "evolving"),
    }
    return (
        own
        | {name: corpus_table(c).path for name, c in CORPUS.items()}
        | {
            "nohist": own["cdf"],
            "from2": own["cdf"],
        }
    )


@pytest.fixture(scope="module")
def server(tables: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    config = history_config(tables, nohist={"historyShared": False}, from2={"startVersion": 2})
    running = start_server(config, tmp_path_factory.mktemp("cdf-server"))
    yield running
    stop_server(running)


@pytest.mark.parametrize(("start", "end"), [(0, None), (1, 3), (2, 2), (4, 4)])
def test_changes_match_deltalake(
    client: httpx.Client, tables: dict[str, Path], start: int, end: int | None
) -> None:
    params = {"startingVersion": start} | ({"endingVersion": end} if end is not None else {})
    response = changes(client, "cdf", **params)
    assert response.headers["delta-table-version"] == str(start)
    assert response.headers[FILE_BATCH_HEADER].endswith("/files")  # local files: batches
    lines = lines_of(response)
    assert "protocol" in lines[0] and "metaData" in lines[1]
    assert change_rows(client, lines) == deltalake_change_rows(tables["cdf"], start, end)


def test_schema_change_in_range_matches_deltalake(
    client: httpx.Client, tables: dict[str, Path]
) -> None:
    lines = lines_of(changes(client, "evolving", startingVersion=0))
    expected = with_all_columns(deltalake_change_rows(tables["evolving"], 0))
    assert with_all_columns(change_rows(client, lines)) == expected


@pytest.mark.parametrize("delta_format", [False, True])
def test_deltaport_client_reads_the_feed(
    server: RunningServer, tables: dict[str, Path], tmp_path: Path, delta_format: bool
) -> None:
    profile = write_token_profile(tmp_path, server.url)
    url = f"{profile}#hist.s.cdf"
    table = load_table_changes_as_arrow(url, starting_version=1, use_delta_format=delta_format)
    got = sorted(row_key(r) for r in table.drop_columns(["_commit_timestamp"]).to_pylist())
    assert got == deltalake_change_rows(tables["cdf"], 1)


def test_every_file_carries_version_and_timestamp(client: httpx.Client) -> None:
    lines = lines_of(changes(client, "cdf", startingVersion=0))
    files = [line[k] for line in lines[2:] for k in line]
    kinds = {k for line in lines[2:] for k in line}
    assert kinds == {"add", "cdf"}  # every commit that removed files wrote cdc files
    hour = 3_600_000
    start_2024 = 1_704_067_200_000
    for file in files:
        assert file["timestamp"] == start_2024 + file["version"] * hour
        assert file["url"].startswith("http") and file["id"]
    # v2 (update), v3 (delete) and v4 (merge) wrote cdc files: only those are sent for them
    by_version = {
        v: {k for line in lines[2:] for k in line if line[k]["version"] == v} for v in range(5)
    }
    assert by_version[0] == {"add"} and by_version[1] == {"add"}
    assert by_version[2] == by_version[3] == by_version[4] == {"cdf"}


@pytest.mark.parametrize("name", ["drs_cdf", "drs_cdf_np", "ckpt_cdf"])
def test_corpus_changes_match_deltalake(
    client: httpx.Client, tables: dict[str, Path], name: str
) -> None:
    start = 3 if name == "ckpt_cdf" else 0  # older commits of that table were cleaned up
    lines = lines_of(changes(client, name, startingVersion=start))
    assert change_rows(client, lines) == deltalake_change_rows(tables[name], start)


@pytest.mark.parametrize("name", ["cdf_dv", "cdc_dv", "cm_name", "cm_id"])
def test_deletion_vector_and_column_mapping_tables_need_delta_format(
    client: httpx.Client, name: str
) -> None:
    start = 1 if name.startswith("cm_") else 0  # the feed was enabled at v1 there
    refused = changes(client, name, startingVersion=start)
    assert refused.status_code == 400
    assert "responseformat=delta" in refused.json()["message"]
    lines = lines_of(changes(client, name, startingVersion=start, headers=DELTA_CAPS))
    assert "deltaProtocol" in lines[0]["protocol"]
    assert lines[1]["metaData"]["version"] == start
    for line in lines[2:]:
        file = line["file"]
        ((kind, action),) = file["deltaSingleAction"].items()
        assert kind in ("add", "remove", "cdc")
        assert action["path"].startswith("http")
        assert isinstance(file["version"], int) and isinstance(file["timestamp"], int)
        dv = action.get("deletionVector")
        if dv is not None and dv["storageType"] != "i":
            assert dv["storageType"] == "p" and dv["pathOrInlineDv"].startswith("http")


def test_delta_format_dv_range_has_removes_and_adds(client: httpx.Client) -> None:
    lines = lines_of(changes(client, "cdf_dv", startingVersion=0, headers=DELTA_CAPS))
    kinds = [next(iter(line["file"]["deltaSingleAction"])) for line in lines[2:]]
    assert "remove" in kinds and "add" in kinds
    removes = [
        line["file"]["deltaSingleAction"]["remove"]
        for line in lines[2:]
        if "remove" in line["file"]["deltaSingleAction"]
    ]
    assert any("deletionVector" in r for r in removes) or any(
        "deletionVector" in line["file"]["deltaSingleAction"].get("add", {}) for line in lines[2:]
    )


def test_starting_and_ending_timestamps(client: httpx.Client, tables: dict[str, Path]) -> None:
    # commits at 2024-01-01T00..04; 01:30 -> first version at/after is 2, 03:10 -> last before is 3
    lines = lines_of(
        changes(
            client,
            "cdf",
            startingTimestamp="2024-01-01T01:30:00Z",
            endingTimestamp="2024-01-01T03:10:00Z",
        )
    )
    versions = {line[k]["version"] for line in lines[2:] for k in line}
    assert versions == {2, 3}
    assert change_rows(client, lines) == deltalake_change_rows(tables["cdf"], 2, 3)


def test_historical_metadata(client: httpx.Client) -> None:
    lines = lines_of(changes(client, "late", startingVersion=2, includeHistoricalMetadata="true"))
    assert lines[1]["metaData"]["version"] == 2
    # no metadata change after v2 in this table: only the head metaData line
    assert sum("metaData" in line for line in lines) == 1


@pytest.mark.parametrize(
    ("table", "params", "fragment"),
    [
        ("nohist", {"startingVersion": 0}, "does not share its history"),
        ("from2", {"startingVersion": 1}, "shared from version 2"),
        ("late", {"startingVersion": 0}, "not enabled at version 0"),
        ("fake_paths", {"startingVersion": 0}, "not enabled at version 2"),
        ("late", {"startingVersion": 1, "endingVersion": 3}, "not enabled at version 1"),
        ("cdf", {"startingVersion": 9}, "starting version 9 is after the latest version 4"),
        ("cdf", {"startingVersion": 0, "endingVersion": 7}, "ending version 7 is after"),
        ("cdf", {"startingVersion": 3, "endingVersion": 1}, "before the starting version 3"),
        ("cdf", {"startingVersion": -1}, "cannot be negative"),
        ("ckpt_cdf", {"startingVersion": 0}, "no longer in the log"),
        ("cdf", {}, "startingVersion or startingTimestamp is required"),
        ("cdf", {"startingVersion": 0, "startingTimestamp": "2024-01-01T00:00:00Z"}, "not both"),
        ("cdf", {"startingTimestamp": "2030-01-01T00:00:00Z"}, "after the latest version 4"),
        (
            "cdf",
            {"startingVersion": 0, "endingTimestamp": "2020-01-01T00:00:00Z"},
            "before the earliest available version",
        ),
        ("cdf", {"startingTimestamp": "yesterday"}, "ISO 8601"),
        ("cdf", {"startingVersion": "one"}, "must be an integer"),
        ("cdf", {"startingVersion": 0, "includeHistoricalMetadata": "maybe"}, "true or false"),
        ("cdf", {"startingVersion": 0, "maxFiles": 0}, "maxFiles must be positive"),
    ],
)
def test_errors_are_400_with_a_precise_message(
    client: httpx.Client, table: str, params: dict[str, Any], fragment: str
) -> None:
    response = changes(client, table, **params)
    assert response.status_code == 400, response.text
    assert fragment in response.json()["message"]


def test_late_cdf_from_its_enablement_works(client: httpx.Client, tables: dict[str, Path]) -> None:
    lines = lines_of(changes(client, "late", startingVersion=2))
    assert change_rows(client, lines) == deltalake_change_rows(tables["late"], 2)


def test_version_by_starting_timestamp(client: httpx.Client) -> None:
    response = client.get(
        "/shares/hist/schemas/s/tables/cdf/version",
        params={"startingTimestamp": "2024-01-01T02:30:00Z"},
    )
    assert response.status_code == 200
    assert response.headers["delta-table-version"] == "3"


def test_log_only_table_lists_cdc_files(client: httpx.Client) -> None:
    lines = lines_of(changes(client, "fake_paths", startingVersion=0, endingVersion=1))
    assert [line["cdf"]["version"] for line in lines if "cdf" in line] == [1]
