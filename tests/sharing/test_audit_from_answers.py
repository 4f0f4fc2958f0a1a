"""The audit record of a table answer is made from the table service's typed result: the
version (a range's start and asked end) and the files of the very page answered, on a
real YAML server writing its records as JSON lines. The expected side counts the file
lines of the answers received."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa
import pytest
from deltalake import write_deltalake

from sharing_server import RunningServer, start_server, stop_server, table_entry
from waiting import wait_until

TABLE = "/shares/s/schemas/d/tables/t"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningServer, Path]]:
    root = tmp_path_factory.mktemp("audit-answers")
    for version in range(3):  # versions 0..2, one file each
        write_deltalake(root / "t", pa.table({"id": [version]}), mode="append")
    records = root / "audit.jsonl"
    config: dict[str, Any] = {
        "version": 1,
        "authorization": {"bearerToken": "${DELTAPORT_TEST_TOKEN}"},
        "signingKey": "audit-answers",
        "audit": {"jsonLines": str(records)},
        "shares": [
            {
                "name": "s",
                "schemas": [
                    {"name": "d", "tables": [table_entry("t", root / "t", historyShared=True)]}
                ],
            }
        ],
    }
    server = start_server(config, root / "server")
    yield server, records
    stop_server(server)


def file_lines(response: httpx.Response) -> int:
    kinds = ("file", "add", "remove", "cdf")
    return sum(next(iter(json.loads(line))) in kinds for line in response.text.splitlines())


def last_record(records: Path, count: int) -> dict[str, Any]:
    def written() -> list[str]:
        lines = records.read_text().splitlines() if records.exists() else []
        assert len(lines) >= count
        return lines

    lines = wait_until(written, 30, "the audit record", ignore=(AssertionError,))
    record: dict[str, Any] = json.loads(lines[count - 1])
    return record


def test_records_carry_the_answers_version_and_files(
    served: tuple[RunningServer, Path],
) -> None:
    server, records = served
    with server.client() as client:
        first_page = client.post(f"{TABLE}/query", json={"maxFiles": 2})
        ranged = client.post(f"{TABLE}/query", json={"startingVersion": 1, "endingVersion": 2})
        asked = client.post(f"{TABLE}/query", json={"version": 1})
    for response in (first_page, ranged, asked):
        assert response.status_code == 200, response.text
    page, range_, travelled = (last_record(records, n) for n in (1, 2, 3))
    assert (page["version"], page["files"]) == (2, file_lines(first_page)) == (2, 2)
    assert page["bytes"] == len(first_page.content)
    assert (range_["version"], range_["endVersion"]) == (1, 2)
    assert range_["files"] == file_lines(ranged) == 2
    assert (travelled["version"], travelled["files"]) == (1, file_lines(asked)) == (1, 2)
