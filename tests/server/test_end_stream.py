"""``endStreamAction``: asked through the capabilities header, sent last, and carrying
``errorMessage`` when the answer fails after the 200 has started."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from history_tables import (
    END_CAPS,
    changes,
    history_config,
    lines_of,
    query,
    write_cdf_table,
    write_log_only_table,
)
from sharing_server import RunningServer, start_server, stop_server

DELTA_END_CAPS = {"delta-sharing-capabilities": "responseformat=delta;includeendstreamaction=true"}
DELTA_CAPS = {"delta-sharing-capabilities": "responseformat=delta"}


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("end-stream")
    return {
        "cdf": write_cdf_table(root / "cdf"),
        "broken": write_log_only_table(root / "broken", 2500, outside=1500, cdf=True),
        "broken_early": write_log_only_table(root / "broken_early", 10, outside=3, cdf=False),
        "escaping": write_log_only_table(
            root / "escaping", 2500, outside=1500, cdf=True, outside_data=True
        ),
    }


@pytest.fixture(scope="module")
def server(
    tables: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningServer]:
    running = start_server(history_config(tables), tmp_path_factory.mktemp("end-server"))
    yield running
    stop_server(running)


def _expirations(lines: list[dict[str, object]]) -> list[int]:
    out = []
    for line in lines:
        for kind in ("file", "add", "cdf"):
            if kind in line:
                out.append(line[kind]["expirationTimestamp"])  # type: ignore[index]
    return out


@pytest.mark.parametrize(
    "ask",
    [
        lambda c: query(c, "cdf", {}, headers=END_CAPS),
        lambda c: query(c, "cdf", {"version": 1}, headers=END_CAPS),
        lambda c: query(c, "cdf", {"startingVersion": 0}, headers=END_CAPS),
        lambda c: changes(c, "cdf", startingVersion=0, headers=END_CAPS),
        lambda c: changes(c, "cdf", startingVersion=0, headers=DELTA_END_CAPS),
    ],
    ids=["snapshot", "time-travel", "range", "changes", "changes-delta"],
)
def test_end_stream_action_is_the_last_line(client: httpx.Client, ask: object) -> None:
    response = ask(client)  # type: ignore[operator]
    assert "includeendstreamaction=true" in response.headers["delta-sharing-capabilities"]
    lines = lines_of(response)
    end = lines[-1]["endStreamAction"]
    assert end["minUrlExpirationTimestamp"] == min(_expirations(lines))
    assert "nextPageToken" not in end and "errorMessage" not in end
    assert all("endStreamAction" not in line for line in lines[:-1])


def test_no_end_line_unless_asked(client: httpx.Client) -> None:
    for response in (query(client, "cdf", {}), changes(client, "cdf", startingVersion=0)):
        assert "includeendstreamaction" not in response.headers["delta-sharing-capabilities"]
        assert all("endStreamAction" not in line for line in lines_of(response))


def test_empty_answer_has_no_expiration(client: httpx.Client) -> None:
    lines = lines_of(
        query(client, "cdf", {"predicateHints": ["part = 'nowhere'"]}, headers=END_CAPS)
    )
    assert lines[-1] == {"endStreamAction": {}}


def test_failure_mid_stream_ends_with_error_message(client: httpx.Client) -> None:
    response = query(client, "broken", {}, headers=DELTA_END_CAPS)
    assert response.status_code == 200
    lines = lines_of(response)
    assert "protocol" in lines[0] and "metaData" in lines[1]
    assert len([line for line in lines if "file" in line]) == 1000  # the first slice got out
    error = lines[-1]["endStreamAction"]["errorMessage"]
    assert "outside" in error


def test_failure_mid_changes_ends_with_error_message(client: httpx.Client) -> None:
    response = changes(client, "broken", startingVersion=1, headers=DELTA_END_CAPS)
    lines = lines_of(response)
    assert len([line for line in lines if "file" in line]) == 1000
    assert "errorMessage" in lines[-1]["endStreamAction"]


def test_failure_on_the_first_slice_still_sends_the_head(client: httpx.Client) -> None:
    lines = lines_of(query(client, "broken_early", {}, headers=DELTA_END_CAPS))
    assert [next(iter(line)) for line in lines] == ["protocol", "metaData", "endStreamAction"]


def test_failure_without_end_stream_aborts_the_body(client: httpx.Client) -> None:
    with pytest.raises(httpx.RemoteProtocolError):
        query(client, "broken", {}, headers=DELTA_CAPS)


def test_pages_before_the_failure_are_fine(client: httpx.Client) -> None:
    lines = lines_of(query(client, "broken", {"maxFiles": 1000}, headers=DELTA_CAPS))
    end = lines[-1]["endStreamAction"]
    assert "errorMessage" not in end and end["nextPageToken"]
    second = lines_of(
        query(
            client,
            "broken",
            {"maxFiles": 1000, "pageToken": end["nextPageToken"]},
            headers=DELTA_CAPS,
        )
    )
    assert "errorMessage" in second[-1]["endStreamAction"]


@pytest.mark.parametrize("caps", [{}, END_CAPS, DELTA_CAPS], ids=["plain", "end", "delta"])
def test_a_file_outside_the_table_is_refused_before_the_answer(
    client: httpx.Client, server: RunningServer, caps: dict[str, str]
) -> None:
    for response in (
        query(client, "escaping", {}, headers=caps),
        query(client, "escaping", {"startingVersion": 1}, headers=caps),
        changes(client, "escaping", startingVersion=1, headers=caps),
    ):
        assert response.status_code == 500
        body = response.json()
        assert body["errorCode"] == "TABLE_CORRUPT"
        assert "table hist.s.escaping" in body["message"]
        assert "version 0" in body["message"] or "version 1" in body["message"]
        assert "elsewhere" not in body["message"]
    # pages that hold no such file are served
    page = lines_of(query(client, "escaping", {"maxFiles": 1000}))
    assert len([line for line in page if "file" in line]) == 1000
