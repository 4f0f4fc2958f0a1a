"""``maxFiles`` and ``pageToken`` on ``/query`` and ``/changes``: page walks, pinned
versions, replicas and token checks."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from deltalake import write_deltalake

from history_tables import (
    DELTA_CAPS,
    changes,
    expired_copy,
    history_config,
    lines_of,
    query,
    rows,
    write_appends,
    write_evolving_table,
)
from sharing_server import RunningServer, start_server, stop_server, write_many_files_table

Ask = Callable[[httpx.Client, dict[str, Any]], httpx.Response]


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("paging")
    return {
        "many": write_many_files_table(root / "many", 300),
        "appends": write_appends(root / "appends", 12),
        "growing": write_appends(root / "growing", 6),
        "evolving": write_evolving_table(root / "evolving"),
    }


@pytest.fixture(scope="module")
def config(tables: dict[str, Path]) -> dict[str, Any]:
    return history_config(tables)


@pytest.fixture(scope="module")
def server(
    config: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningServer]:
    running = start_server(config, tmp_path_factory.mktemp("paging-server"))
    yield running
    stop_server(running)


def ask_query(table: str, headers: dict[str, str] | None = None) -> Ask:
    return lambda c, body: query(c, table, body, headers=headers)


def ask_changes(table: str, headers: dict[str, str] | None = None) -> Ask:
    def ask(c: httpx.Client, body: dict[str, Any]) -> httpx.Response:
        return changes(c, table, headers=headers, **body)

    return ask


def files_of(lines: list[dict[str, Any]]) -> list[tuple[str, str, Any]]:
    """(kind, id, version) of each file line, in order."""
    out = []
    for line in lines:
        kind = next(iter(line))
        if kind in ("file", "add", "remove", "cdf"):
            out.append((kind, line[kind]["id"], line[kind].get("version")))
    return out


def sequence_of(lines: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Files as (kind, id, version) and metaData lines as ("metaData", version)."""
    out: list[tuple[Any, ...]] = []
    for line in lines:
        if "metaData" in line:
            out.append(("metaData", line["metaData"]["version"]))
        elif "endStreamAction" not in line:
            out.extend(files_of([line]))
    return out


def walk(
    client: httpx.Client, ask: Ask, body: dict[str, Any], max_files: int
) -> tuple[list[list[dict[str, Any]]], list[str]]:
    """Every page of the answer (the lines of each) and the page tokens used."""
    pages, tokens = [], []
    token = None
    while True:
        page_body = body | {"maxFiles": max_files} | ({"pageToken": token} if token else {})
        lines = lines_of(ask(client, page_body))
        pages.append(lines)
        end = lines[-1]["endStreamAction"]
        token = end.get("nextPageToken")
        if token is None:
            return pages, tokens
        tokens.append(token)
        assert len(pages) < 1000


CASES = [
    ("range-metadata", ask_query("evolving"), {"startingVersion": 0}),
    (
        "changes-metadata",
        ask_changes("evolving"),
        {"startingVersion": 0, "includeHistoricalMetadata": "true"},
    ),
    ("snapshot", ask_query("many"), {}),
    ("predicate", ask_query("many"), {"predicateHints": ["id >= 1500"]}),
    ("time-travel", ask_query("appends"), {"version": 6}),
    ("range-parquet", ask_query("appends"), {"startingVersion": 2}),
    ("range-delta", ask_query("appends", DELTA_CAPS), {"startingVersion": 0}),
    ("changes", ask_changes("appends"), {"startingVersion": 0}),
    (
        "changes-meta",
        ask_changes("appends"),
        {"startingVersion": 0, "includeHistoricalMetadata": "true"},
    ),
    (
        "changes-delta",
        ask_changes("appends", DELTA_CAPS),
        {"startingVersion": 1, "endingVersion": 12},
    ),
]


@pytest.mark.parametrize("max_files", [1, 7, 100, 5000])
@pytest.mark.parametrize(("name", "ask", "body"), CASES, ids=[c[0] for c in CASES])
def test_union_of_pages_is_the_unpaged_answer(
    client: httpx.Client, name: str, ask: Ask, body: dict[str, Any], max_files: int
) -> None:
    if max_files == 1 and name in ("snapshot", "predicate"):
        max_files = 3  # 300 files: keep the walk short
    whole = lines_of(ask(client, body))
    pages, _ = walk(client, ask, body, max_files)
    paged_files = [f for page in pages for f in files_of(page)]
    assert paged_files == files_of(whole)
    assert len(set(paged_files)) == len(paged_files)
    for page in pages:
        assert page[0] == whole[0] and page[1] == whole[1]  # every page has the head
        assert len(files_of(page)) <= max_files
    # metaData lines inside the answer (historical metadata) come once, across all pages
    inner = [line for page in pages for line in page[2:] if "metaData" in line]
    assert inner == [line for line in whole[2:] if "metaData" in line]
    assert bool(inner) == name.endswith("-metadata")
    # ...each at the same place relative to the files
    paged_sequence = [item for page in pages for item in sequence_of(page[2:])]
    assert paged_sequence == sequence_of(whole[2:])
    if len(files_of(whole)) > max_files:
        assert len(pages) == -(-len(files_of(whole)) // max_files)


def test_versions_are_pinned_by_the_token(client: httpx.Client, tables: dict[str, Path]) -> None:
    for ask, body in ((ask_query("growing"), {}), (ask_changes("growing"), {"startingVersion": 0})):
        first = lines_of(ask(client, body | {"maxFiles": 2}))
        version = query(client, "growing", {}).headers["delta-table-version"]
        write_deltalake(tables["growing"], rows(range(100, 103), "late"), mode="append")
        assert query(client, "growing", {}).headers["delta-table-version"] != version
        token = first[-1]["endStreamAction"]["nextPageToken"]
        rest = lines_of(ask(client, body | {"maxFiles": 1000, "pageToken": token}))
        assert rest[-1]["endStreamAction"].get("nextPageToken") is None
        pinned = files_of(first) + files_of(rest)
        if "startingVersion" in body:
            unpaged = files_of(lines_of(ask(client, body | {"endingVersion": int(version)})))
        else:
            unpaged = files_of(lines_of(query(client, "growing", {"version": int(version)})))
            unpaged = [("file", i, None) for _, i, _ in unpaged]
        assert pinned == unpaged


def test_tokens_work_on_another_replica(
    client: httpx.Client, config: dict[str, Any], tmp_path: Path
) -> None:
    token = lines_of(query(client, "many", {"maxFiles": 10}))[-1]["endStreamAction"][
        "nextPageToken"
    ]
    other = start_server(config, tmp_path / "replica")
    stranger = start_server(config | {"signingKey": "another-key"}, tmp_path / "stranger")
    try:
        with other.client() as c:
            page = lines_of(query(c, "many", {"maxFiles": 10, "pageToken": token}))
            assert len(files_of(page)) == 10
        with stranger.client() as c:
            refused = query(c, "many", {"maxFiles": 10, "pageToken": token})
            assert refused.status_code == 400
            assert "altered or issued by another server" in refused.json()["message"]
    finally:
        stop_server(other)
        stop_server(stranger)


def _tampered(token: str) -> str:
    body, _, mac = token.partition(".")
    flipped = body[:-2] + ("A" if body[-2] != "A" else "B") + body[-1]
    return f"{flipped}.{mac}"


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (lambda t, b: (_tampered(t), b), "not valid"),
        (lambda t, b: (t[:-3], b), "not valid"),
        (lambda t, b: ("garbage", b), "not valid"),
        (lambda t, b: (expired_copy(t), b), "expired"),
        (lambda t, b: (t, b | {"limitHint": 5}), "other parameters"),
        (lambda t, b: (t, b | {"version": 3}), "other parameters"),
    ],
    ids=["tampered", "truncated", "garbage", "expired", "other-limit", "other-version"],
)
def test_bad_page_tokens_are_400(client: httpx.Client, change: Any, fragment: str) -> None:
    body = {"maxFiles": 2}
    token = lines_of(query(client, "appends", body))[-1]["endStreamAction"]["nextPageToken"]
    token, body = change(token, body)
    response = query(client, "appends", body | {"pageToken": token})
    assert response.status_code == 400, response.text
    assert fragment in response.json()["message"]


def test_page_token_of_another_table_or_route(client: httpx.Client) -> None:
    token = lines_of(query(client, "appends", {"maxFiles": 2}))[-1]["endStreamAction"][
        "nextPageToken"
    ]
    other_table = query(client, "growing", {"maxFiles": 2, "pageToken": token})
    assert other_table.status_code == 400
    assert "another table" in other_table.json()["message"]
    other_route = changes(client, "appends", startingVersion=0, maxFiles=2, pageToken=token)
    assert other_route.status_code == 400
    as_refresh = query(client, "appends", {"refreshToken": token})
    assert as_refresh.status_code == 400
    assert "not valid for this request" in as_refresh.json()["message"]


def test_max_files_must_be_positive(client: httpx.Client) -> None:
    assert query(client, "many", {"maxFiles": 0}).status_code == 400
    assert changes(client, "appends", startingVersion=0, maxFiles=-1).status_code == 400
