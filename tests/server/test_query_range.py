"""``POST .../query`` with ``startingVersion``: each version's adds, removes and metadata."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from deltaport.server.answers.file_ids import file_id
from history_tables import DELTA_CAPS, history_config, lines_of, query, write_evolving_table
from sharing_server import RunningServer, start_server, stop_server


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_evolving_table(tmp_path_factory.mktemp("range") / "evolving")


@pytest.fixture(scope="module")
def server(table: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    config = history_config({"evolving": table, "plain": table}, plain={"historyShared": False})
    running = start_server(config, tmp_path_factory.mktemp("range-server"))
    yield running
    stop_server(running)


def log_actions(table: Path, start: int, end: int) -> set[tuple[str, str, int, bool]]:
    """(kind, file id, version, dataChange) of the add and remove actions in the log."""
    out = set()
    for version in range(start, end + 1):
        text = (table / "_delta_log" / f"{version:020d}.json").read_text()
        for action in map(json.loads, text.splitlines()):
            for kind in ("add", "remove"):
                if kind in action:
                    path = action[kind]["path"]
                    out.add((kind, file_id(path), version, action[kind].get("dataChange", True)))
    return out


def test_parquet_format_sends_data_changes_with_metadata_changes(
    client: httpx.Client, table: Path
) -> None:
    response = query(client, "evolving", {"startingVersion": 0})
    assert response.headers["delta-table-version"] == "0"
    lines = lines_of(response)
    assert lines[0] == {"protocol": {"minReaderVersion": 1}}
    assert lines[1]["metaData"]["version"] == 0
    assert "extra" not in lines[1]["metaData"]["schemaString"]
    sent = {
        (kind, line[kind]["id"], line[kind]["version"], True)
        for line in lines[2:]
        for kind in line
        if kind in ("add", "remove")
    }
    expected = {a for a in log_actions(table, 0, 4) if a[3]}  # optimize's files left out
    assert sent == expected
    changes = [(i, line["metaData"]) for i, line in enumerate(lines) if "metaData" in line][1:]
    assert [m["version"] for _, m in changes] == [2]
    position, metadata = changes[0]
    assert "extra" in metadata["schemaString"]
    before = [next(iter(line.values()))["version"] for line in lines[2:position]]
    after = [next(iter(line.values()))["version"] for line in lines[position + 1 :]]
    assert max(before) < 2 <= min(after)
    hour, start_2024 = 3_600_000, 1_704_067_200_000
    for line in lines[2:]:
        file = next(iter(line.values()))
        if "url" in file:
            assert file["timestamp"] == start_2024 + file["version"] * hour


def test_delta_format_keeps_non_data_changes(client: httpx.Client, table: Path) -> None:
    lines = lines_of(query(client, "evolving", {"startingVersion": 1}, headers=DELTA_CAPS))
    sent = set()
    for line in lines[2:]:
        if "file" in line:
            file = line["file"]
            ((kind, action),) = file["deltaSingleAction"].items()
            sent.add((kind, file["id"], file["version"], action["dataChange"]))
    assert sent == log_actions(table, 1, 4)
    assert any(not a[3] for a in sent)  # the optimize commit's files


def test_ending_version(client: httpx.Client, table: Path) -> None:
    lines = lines_of(query(client, "evolving", {"startingVersion": 1, "endingVersion": 2}))
    versions = {next(iter(line.values()))["version"] for line in lines[2:]}
    assert versions == {1, 2}


def test_changes_with_historical_metadata(client: httpx.Client) -> None:
    params = {"startingVersion": 1, "includeHistoricalMetadata": "true"}
    lines = lines_of(client.get("/shares/hist/schemas/s/tables/evolving/changes", params=params))
    inner = [line["metaData"] for line in lines[2:] if "metaData" in line]
    assert [m["version"] for m in inner] == [2]
    assert "extra" in inner[0]["schemaString"]
    without = lines_of(
        client.get("/shares/hist/schemas/s/tables/evolving/changes", params={"startingVersion": 1})
    )
    assert all("metaData" not in line for line in without[2:])


@pytest.mark.parametrize(
    ("table_name", "body", "fragment"),
    [
        ("plain", {"startingVersion": 0}, "does not share its history"),
        ("evolving", {"startingVersion": 0, "version": 1}, "cannot be combined"),
        ("evolving", {"startingVersion": 5}, "after the latest version 4"),
        ("evolving", {"startingVersion": -2}, "cannot be negative"),
        ("evolving", {"startingVersion": 2, "endingVersion": 1}, "before the starting version"),
        ("evolving", {"startingVersion": 0, "includeRefreshToken": True}, "latest snapshot"),
        ("evolving", {"endingVersion": 1}, "endingVersion needs startingVersion"),
    ],
)
def test_errors(client: httpx.Client, table_name: str, body: dict[str, Any], fragment: str) -> None:
    response = query(client, table_name, body)
    assert response.status_code == 400, response.text
    assert fragment in response.json()["message"]
