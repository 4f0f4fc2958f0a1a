"""``includeRefreshToken`` / ``refreshToken``: new URLs for the same version's files."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from deltalake import write_deltalake

from history_tables import (
    END_CAPS,
    expired_copy,
    history_config,
    lines_of,
    query,
    rows,
    write_appends,
)
from sharing_server import RunningServer, start_server, stop_server


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("refresh")
    return {"t": write_appends(root / "t", 5), "other": write_appends(root / "other", 2)}


@pytest.fixture(scope="module")
def server(
    tables: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningServer]:
    # short URL lifetime: URL expiries are rounded to a tenth of it, so one second apart
    # a refresh gets new URLs
    config = history_config(tables) | {"preSignedUrlTimeoutSeconds": 10}
    running = start_server(config, tmp_path_factory.mktemp("refresh-server"))
    yield running
    stop_server(running)


def _files(lines: list[dict[str, Any]]) -> dict[str, str]:
    return {line["file"]["id"]: line["file"]["url"] for line in lines if "file" in line}


def test_refresh_gives_new_urls_for_the_same_files(
    client: httpx.Client, tables: dict[str, Path]
) -> None:
    first = query(client, "t", {"includeRefreshToken": True})
    lines = lines_of(first)
    token = lines[-1]["endStreamAction"]["refreshToken"]
    before = _files(lines)
    write_deltalake(tables["t"], rows(range(500, 503), "new"), mode="append")
    time.sleep(1.1)  # the next expiry step
    refreshed = query(client, "t", {"includeRefreshToken": True, "refreshToken": token})
    assert refreshed.headers["delta-table-version"] == first.headers["delta-table-version"]
    again = lines_of(refreshed)
    after = _files(again)
    assert after.keys() == before.keys()
    assert all(after[i] != before[i] for i in before)
    for url in after.values():
        assert client.get(url).status_code == 200
    assert again[-1]["endStreamAction"]["refreshToken"]
    latest = lines_of(query(client, "t", {}))
    assert len(_files(latest)) == len(before) + 1


def test_refresh_with_pages(client: httpx.Client) -> None:
    lines = lines_of(query(client, "t", {"includeRefreshToken": True, "maxFiles": 1}))
    end = lines[-1]["endStreamAction"]
    assert end["refreshToken"] and end["nextPageToken"]
    refreshed = lines_of(
        query(
            client,
            "t",
            {"maxFiles": 1, "includeRefreshToken": True, "refreshToken": end["refreshToken"]},
        )
    )
    assert _files(refreshed).keys() == _files(lines).keys()
    assert refreshed[-1]["endStreamAction"]["nextPageToken"]


def test_end_stream_action_carries_the_token_without_the_capability(client: httpx.Client) -> None:
    plain = lines_of(query(client, "t", {}))
    assert "endStreamAction" not in plain[-1]
    with_token = lines_of(query(client, "t", {"includeRefreshToken": True}, headers=END_CAPS))
    assert set(with_token[-1]["endStreamAction"]) == {"refreshToken", "minUrlExpirationTimestamp"}


@pytest.mark.parametrize(
    ("table", "body", "fragment"),
    [
        ("t", {"version": 1, "includeRefreshToken": True}, "latest snapshot"),
        (
            "t",
            {"timestamp": "2030-01-01T00:00:00Z", "includeRefreshToken": True},
            "latest snapshot",
        ),
        ("other", {}, "another table"),
        ("t", {"limitHint": 1}, "other parameters"),
        ("t", {"pageToken": "x"}, "cannot be combined with pageToken"),
    ],
)
def test_bad_refresh_requests_are_400(
    client: httpx.Client, table: str, body: dict[str, Any], fragment: str
) -> None:
    token = lines_of(query(client, "t", {"includeRefreshToken": True}))[-1]["endStreamAction"][
        "refreshToken"
    ]
    response = query(client, table, {"refreshToken": token} | body)
    assert response.status_code == 400, response.text
    assert fragment in response.json()["message"]


def test_expired_refresh_token(client: httpx.Client) -> None:
    end = lines_of(query(client, "t", {"includeRefreshToken": True}))[-1]["endStreamAction"]
    response = query(client, "t", {"refreshToken": expired_copy(end["refreshToken"])})
    assert response.status_code == 400
    assert "refreshToken has expired" in response.json()["message"]


def test_tampered_refresh_token_and_refresh_token_as_page_token(client: httpx.Client) -> None:
    token = lines_of(query(client, "t", {"includeRefreshToken": True}))[-1]["endStreamAction"][
        "refreshToken"
    ]
    body, _, mac = token.partition(".")
    tampered = query(client, "t", {"refreshToken": f"{body}.{mac[::-1]}"})
    assert tampered.status_code == 400
    as_page = query(client, "t", {"maxFiles": 1, "pageToken": token})
    assert as_page.status_code == 400
    assert "not valid for this request" in as_page.json()["message"]
