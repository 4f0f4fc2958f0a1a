"""Regressions of an outside probe: deep predicates, unbounded bodies, shutdown with a stuck
request, a corrupt newest commit, Host-built redirects, echoed input, ``maxResults=0``
(in test_listing.py) and files outside the table (in test_end_stream.py)."""

from __future__ import annotations

import json
import signal
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from history_tables import changes, history_config, query, write_log_only_table
from sharing_server import TOKEN, RunningServer, start_server, stop_server

BODY_LIMIT = 64 * 1024
TABLE = "/shares/hist/schemas/s/tables"


def _json_not_chain(depth: int) -> str:
    leaf = {"op": "column", "name": "flag", "valueType": "bool"}
    text = json.dumps(leaf)
    for _ in range(depth):
        text = '{"op":"not","children":[' + text + "]}"
    return text


def _write_corrupt_newest(path: Path) -> Path:
    write_log_only_table(path, 3, outside=None, cdf=True)
    (path / "_delta_log" / f"{2:020d}.json").write_text('{"add": {"path": "x.parquet", \n')
    return path


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("probe")
    return {
        "many": write_log_only_table(root / "many", 3000, outside=None, cdf=False),
        "corrupt": _write_corrupt_newest(root / "corrupt"),
    }


@pytest.fixture(scope="module")
def server(
    tables: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningServer]:
    config = history_config(tables) | {
        "maxRequestBodyBytes": BODY_LIMIT,
        "maxPredicateHints": 5,
        "maxPredicateHintLength": 4096,
        "maxPredicateHintDepth": 20,
        "shutdownGraceSeconds": 2,
    }
    running = start_server(config, tmp_path_factory.mktemp("probe-server"))
    yield running
    stop_server(running)


def _file_count(response: httpx.Response) -> int:
    assert response.status_code == 200, response.text
    return sum(1 for line in response.text.splitlines() if '"file"' in line)


# -- 1. predicate hints: bounded depth and length, never a 500 -------------------------


@pytest.mark.parametrize(
    "body",
    [
        {"predicateHints": ["(" * 300 + "id = 1" + ")" * 300]},
        {"predicateHints": ["NOT " * 900 + "id = 1"]},
        {"predicateHints": ["NOT (" * 21 + "id = 1" + ")" * 21]},
        {"jsonPredicateHints": _json_not_chain(120)},
        {"jsonPredicateHints": _json_not_chain(21)},
    ],
    ids=["parentheses", "not-chain", "just-past-depth", "json-120", "json-just-past"],
)
def test_too_deep_hints_are_refused_with_400(client: httpx.Client, body: dict[str, Any]) -> None:
    response = query(client, "many", body)
    assert response.status_code == 400, response.text
    error = response.json()
    assert error["errorCode"] == "INVALID_PARAMETER_VALUE"
    assert "deeper than 20 levels" in error["message"]
    assert len(error["message"]) < 200


def test_very_deep_json_that_the_decoder_cannot_nest_is_refused(client: httpx.Client) -> None:
    body = {"jsonPredicateHints": '{"op":"not","children":[' * 1000}
    response = query(client, "many", body)
    # longer than the hint length limit: refused before it is decoded
    assert response.status_code == 400
    assert "the limit is 4096" in response.json()["message"]


def test_hints_within_the_depth_are_evaluated(client: httpx.Client) -> None:
    assert _file_count(query(client, "many", {"predicateHints": ["NOT " * 20 + "id = 1"]})) == 3000
    json_hint = _json_not_chain(19)
    assert _file_count(query(client, "many", {"jsonPredicateHints": json_hint})) == 3000


def test_a_hint_over_the_length_limit_is_refused(client: httpx.Client) -> None:
    response = query(client, "many", {"predicateHints": ["id = 1 OR " * 500 + "id = 2"]})
    assert response.status_code == 400
    message = response.json()["message"]
    assert "predicateHints[0]" in message and "4096" in message


def test_hints_past_the_count_limit_are_skipped(client: httpx.Client) -> None:
    """Five hints are evaluated; a sixth that no file can match is not (it would drop
    every file with stats; these files have none, so a malformed hint shows it instead)."""
    hints = ["id = 1"] * 5 + ["id = = 1"]
    assert _file_count(query(client, "many", {"predicateHints": hints})) == 3000
    response = query(client, "many", {"predicateHints": ["id = 1"] * 500})
    assert _file_count(response) == 3000


def test_malformed_hints_are_skipped_not_refused(client: httpx.Client) -> None:
    for body in ({"predicateHints": ["id = = 1"]}, {"jsonPredicateHints": '{"op": "nope"}'}):
        assert _file_count(query(client, "many", body)) == 3000


# -- 2. request bodies are bounded -----------------------------------------------------


def test_a_body_over_the_limit_is_refused_with_413(client: httpx.Client) -> None:
    body = {"predicateHints": ["id = 1"] * (BODY_LIMIT // 8)}
    response = query(client, "many", body)
    assert response.status_code == 413
    assert response.json()["errorCode"] == "REQUEST_TOO_LARGE"
    assert str(BODY_LIMIT) in response.json()["message"]


def test_a_chunked_body_over_the_limit_is_refused_with_413(client: httpx.Client) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"predicateHints": ['
        for _ in range(BODY_LIMIT // 1000 + 10):
            yield b'"' + b"x" * 1000 + b'",'
        yield b'"id = 1"]}'

    response = client.post(f"{TABLE}/many/query", content=chunks())
    assert response.status_code == 413
    assert response.json()["errorCode"] == "REQUEST_TOO_LARGE"


def test_every_route_has_the_limit(client: httpx.Client, server: RunningServer) -> None:
    big = b"x" * (BODY_LIMIT + 1)
    for response in (
        client.request("GET", "/shares", content=big),
        httpx.post(server.url + "/files", content=big),
    ):
        assert response.status_code == 413
        assert response.json()["errorCode"] == "REQUEST_TOO_LARGE"


def test_a_body_at_the_limit_is_served(client: httpx.Client) -> None:
    hint = "id = 1"
    body = json.dumps({"predicateHints": [hint], "limitHint": 1})
    padded = body[:-1] + " " * (BODY_LIMIT - len(body)) + "}"
    assert len(padded) == BODY_LIMIT
    assert _file_count(client.post(f"{TABLE}/many/query", content=padded)) >= 1


# -- 4. a corrupt newest commit: the same clear error on every endpoint ------------------


def test_a_corrupt_newest_commit_is_reported_on_every_endpoint(
    client: httpx.Client, tables: dict[str, Path]
) -> None:
    base = f"{TABLE}/corrupt"
    for response in (
        client.get(f"{base}/version"),
        client.get(f"{base}/metadata"),
        query(client, "corrupt", {}),
        query(client, "corrupt", {"startingVersion": 1}),
        changes(client, "corrupt", startingVersion=1),
    ):
        assert response.status_code == 500, response.request.url
        error = response.json()
        assert error["errorCode"] == "TABLE_CORRUPT"
        assert "table hist.s.corrupt" in error["message"]
        assert "version 2" in error["message"]
        assert str(tables["corrupt"]) not in error["message"]
        assert "_delta_log" not in error["message"]
    # the versions before it still read
    assert _file_count(query(client, "corrupt", {"version": 1})) == 6


# -- 5, 6. no Host-built redirects, no whole inputs echoed ------------------------------


def test_a_trailing_slash_is_not_redirected(client: httpx.Client) -> None:
    for path in ("/shares/", f"{TABLE}/many/version/", f"{TABLE}/many/query/"):
        response = client.request(
            "GET" if "query" not in path else "POST",
            path,
            headers={"Host": "evil.example"},
            follow_redirects=False,
        )
        assert response.status_code == 404, path
        assert "location" not in response.headers
        assert response.json()["errorCode"] == "RESOURCE_DOES_NOT_EXIST"


def test_long_inputs_are_not_echoed_whole(client: httpx.Client) -> None:
    name = "n" * 10_000
    segment = "n" * 700  # longer than a name, within the path limit (767)
    for response, status, code in (
        (client.get(f"/shares/{segment}"), 404, "RESOURCE_DOES_NOT_EXIST"),
        (client.get(f"/shares/hist/schemas/{segment}/tables"), 404, "RESOURCE_DOES_NOT_EXIST"),
        (client.get(f"{TABLE}/{segment}/version"), 404, "RESOURCE_DOES_NOT_EXIST"),
        (client.get(f"/no-such-route/{segment}"), 404, "RESOURCE_DOES_NOT_EXIST"),
        (client.get("/shares", params={"maxResults": name}), 400, "INVALID_PARAMETER_VALUE"),
        (
            client.get(f"{TABLE}/many/version", params={"startingTimestamp": name}),
            400,
            "INVALID_PARAMETER_VALUE",
        ),
    ):
        assert (response.status_code, response.json()["errorCode"]) == (status, code), (
            response.text[:200]
        )
        message = response.json()["message"]
        assert len(message) < 300, message[:300]
        assert "characters)" in message
    for path in (f"/shares/{name}", f"{TABLE}/{name}/version", f"/no-such-route/{name}"):
        response = client.get(path)  # a segment longer than any name: refused before routing
        assert (response.status_code, response.json()["errorCode"]) == (
            414,
            "REQUEST_PATH_TOO_LONG",
        )
        assert "nnn" not in response.text and len(response.text) < 300


# -- 3. SIGTERM ends a stuck request after the grace period ----------------------------


def test_sigterm_ends_a_stuck_request_after_the_grace_period(
    tables: dict[str, Path], tmp_path: Path
) -> None:
    running = start_server(history_config(tables) | {"shutdownGraceSeconds": 1}, tmp_path)
    try:
        host, port = running.base.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port))) as stuck:
            # a body announced and never sent: the request waits for it forever
            stuck.sendall(
                f"POST {running.endpoint}{TABLE}/many/query HTTP/1.1\r\n"
                f"Host: {host}\r\nAuthorization: Bearer {TOKEN}\r\n"
                "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{".encode()
            )
            time.sleep(0.5)
            started = time.monotonic()
            running.process.send_signal(signal.SIGTERM)
            code = running.process.wait(timeout=20)
            took = time.monotonic() - started
        assert code in (0, -signal.SIGTERM)  # uvicorn re-raises the signal once done
        assert took < 10, took
        assert "graceful shutdown exceeded" in running.log()
    finally:
        if running.process.poll() is None:
            running.process.kill()
            running.process.wait()
