"""What PROTOCOL.md added since the project began, by raw HTTP and through our client:
the ``fileidhash`` header, ``includeHistoricalProtocol`` and OpenSharing's Get Table."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from deltalake.table import TableFeatures

from deltaport.client import SharingClient, SharingError, TableInfo
from deltaport.client.base.errors import ResponseError
from deltaport.server.answers.file_ids import file_id
from history_tables import DELTA_CAPS, ENABLE_CDF, TABLES, changes, history_config, lines_of, query
from sharing_server import TOKEN, RunningServer, start_server, stop_server

DIGESTS = {"parquet": hashlib.md5, "delta": hashlib.sha256}


def write_upgraded_table(path: Path) -> Path:
    """v0 insert (CDF on), v1 deletion vectors enabled (a protocol change), v2 append."""
    write_deltalake(path, pa.table({"id": pa.array([1, 2], pa.int64())}), configuration=ENABLE_CDF)
    DeltaTable(path).alter.add_feature(
        [TableFeatures.DeletionVectors], allow_protocol_versions_increase=True
    )
    write_deltalake(path, pa.table({"id": pa.array([3], pa.int64())}), mode="append")
    return path


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_upgraded_table(tmp_path_factory.mktemp("upgraded") / "t")


@pytest.fixture(scope="module")
def server(table: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    config = history_config({"upgraded": table})
    config["shares"][0]["id"] = "share-uuid"
    config["shares"][0]["schemas"][0]["tables"][0]["id"] = "table-uuid"
    running = start_server(config, tmp_path_factory.mktemp("protocol-2026-server"))
    yield running
    stop_server(running)


@pytest.fixture
def sharing(server: RunningServer, tmp_path: Path) -> Iterator[SharingClient]:
    profile = tmp_path / "p.share"
    profile.write_text(
        json.dumps({"shareCredentialsVersion": 1, "endpoint": server.url, "bearerToken": TOKEN})
    )
    with SharingClient(str(profile)) as client:
        yield client


def log_paths(table: Path, through: int = 2) -> set[str]:
    """The paths of the files added by versions up to ``through``, as the log has them."""
    out = set()
    for commit in sorted((table / "_delta_log").glob("*.json"))[: through + 1]:
        for action in map(json.loads, commit.read_text().splitlines()):
            if "add" in action:
                out.add(action["add"]["path"])
    return out


def ids_of(lines: list[dict[str, Any]]) -> set[str]:
    out = set()
    for line in lines:
        ((key, value),) = line.items()
        if key in ("file", "add", "cdf", "remove"):
            out.add(value["id"])
    return out


# -- fileidhash -------------------------------------------------------------------------
@pytest.mark.parametrize("scheme", ["parquet", "delta"])
@pytest.mark.parametrize("caps", [{}, DELTA_CAPS], ids=["parquet-format", "delta-format"])
def test_file_id_hash_names_the_digest_of_the_log_path(
    client: httpx.Client, table: Path, scheme: str, caps: dict[str, str]
) -> None:
    # version 0, before deletion vectors: the parquet format can describe it
    expected = {DIGESTS[scheme](p.encode()).hexdigest() for p in log_paths(table, 0)}
    header = {**caps, "FileIdHash": scheme.upper()}  # any case; echoed in lowercase
    answers = [
        query(client, "upgraded", {"version": 0}, headers=header),
        query(client, "upgraded", {"startingVersion": 0, "endingVersion": 0}, headers=header),
        changes(client, "upgraded", startingVersion=0, endingVersion=0, headers=header),
    ]
    for answer in answers:
        assert answer.headers["fileidhash"] == scheme
        assert ids_of(lines_of(answer)) == expected
    if caps:
        latest = query(client, "upgraded", {}, headers=header)
        assert latest.headers["fileidhash"] == scheme
        everything = {DIGESTS[scheme](p.encode()).hexdigest() for p in log_paths(table)}
        assert ids_of(lines_of(latest)) == everything


def test_without_the_header_ids_are_deltaports_own(client: httpx.Client, table: Path) -> None:
    answer = query(client, "upgraded", {}, headers=DELTA_CAPS)
    assert "fileidhash" not in answer.headers
    assert ids_of(lines_of(answer)) == {file_id(p) for p in log_paths(table)}
    again = query(client, "upgraded", {}, headers={**DELTA_CAPS, "fileidhash": "delta"})
    assert ids_of(lines_of(again)).isdisjoint(ids_of(lines_of(answer)))


@pytest.mark.parametrize("value", ["md5", "", "parquet,delta"])
def test_an_unsupported_file_id_hash_is_a_400(client: httpx.Client, value: str) -> None:
    for answer in (
        query(client, "upgraded", {}, headers={"fileidhash": value}),
        changes(client, "upgraded", startingVersion=0, headers={"fileidhash": value}),
    ):
        assert answer.status_code == 400, answer.text
        assert answer.json()["errorCode"] == "INVALID_PARAMETER_VALUE"
        assert "fileidhash" in answer.json()["message"]


def test_our_client_asks_for_and_checks_file_id_hashes(sharing: SharingClient, table: Path) -> None:
    handle = sharing.table("hist.s.upgraded")
    plan = handle.snapshot(file_id_hash="delta").plan()
    assert {f.id for f in plan.files} == {
        hashlib.sha256(p.encode()).hexdigest() for p in log_paths(table)
    }
    since = handle.files_since(0, file_id_hash="parquet")
    assert {f.id for f in since.files} == {
        hashlib.md5(p.encode()).hexdigest() for p in log_paths(table)
    }
    refreshed = sharing.refresh_plan(plan)
    assert [f.id for f in refreshed.files] == [f.id for f in plan.files]
    rows = handle.changes(starting_version=0, file_id_hash="parquet").to_arrow()
    assert sorted(rows.column("id").to_pylist()) == [1, 2, 3]


def test_our_client_refuses_an_answer_without_the_echo(
    sharing: SharingClient, server: RunningServer
) -> None:
    # a server that ignores the header (the same answer without its echo)
    def without_echo(request: httpx.Request) -> httpx.Response:
        with httpx.Client() as http:
            real = http.send(
                http.build_request(
                    request.method, request.url, headers=request.headers, content=request.content
                )
            )
        headers = {k: v for k, v in real.headers.items() if k.lower() != "fileidhash"}
        headers.pop("content-length", None)
        headers.pop("content-encoding", None)
        return httpx.Response(real.status_code, headers=headers, content=real.content)

    sharing.rest.http = httpx.Client(transport=httpx.MockTransport(without_echo))
    with pytest.raises(ResponseError, match="fileidhash"):
        sharing.table("hist.s.upgraded").snapshot(file_id_hash="delta").plan()


# -- includeHistoricalProtocol ----------------------------------------------------------
def protocol_lines(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [line["protocol"] for line in lines if "protocol" in line]


def test_historical_protocols_come_with_their_versions_in_the_delta_format(
    client: httpx.Client,
) -> None:
    answers = [
        query(
            client,
            "upgraded",
            {"startingVersion": 0, "includeHistoricalProtocol": True},
            headers=DELTA_CAPS,
        ),
        changes(
            client,
            "upgraded",
            startingVersion=0,
            includeHistoricalProtocol="true",
            headers=DELTA_CAPS,
        ),
    ]
    for answer in answers:
        lines = lines_of(answer)
        head, *historical = protocol_lines(lines)
        assert head["version"] == 0
        assert [p["version"] for p in historical] == [1]
        assert historical[0]["deltaProtocol"]["readerFeatures"] == ["deletionVectors"]
        # before the files of its version
        position = lines.index({"protocol": historical[0]})
        versions = [line["file"]["version"] for line in lines[position:] if "file" in line]
        assert versions and min(versions) >= 1


def test_historical_protocols_are_left_out_unless_asked_or_in_parquet(
    client: httpx.Client,
) -> None:
    for answer in (
        query(client, "upgraded", {"startingVersion": 0}, headers=DELTA_CAPS),
        changes(client, "upgraded", startingVersion=0, headers=DELTA_CAPS),
    ):
        assert protocol_lines(lines_of(answer)) == [lines_of(answer)[0]["protocol"]]
        assert "version" not in lines_of(answer)[0]["protocol"]
    # the parquet format has no protocol versions (a range past v0 needs the delta format)
    parquet = changes(
        client, "upgraded", startingVersion=0, endingVersion=0, includeHistoricalProtocol="true"
    )
    assert protocol_lines(lines_of(parquet)) == [{"minReaderVersion": 1}]
    bad = changes(client, "upgraded", startingVersion=0, includeHistoricalProtocol="yes")
    assert bad.status_code == 400
    assert bad.json()["errorCode"] == "INVALID_PARAMETER_VALUE"


def test_our_client_keeps_the_protocol_changes_of_a_range(sharing: SharingClient) -> None:
    plan = sharing.table("hist.s.upgraded").files_since(0, use_delta_format=True)
    assert [(v, p.reader_features) for v, p in plan.protocol_changes] == [(1, ("deletionVectors",))]


# -- Get Table (OpenSharing) ------------------------------------------------------------
def test_get_table_answers_identifiers_and_format(client: httpx.Client) -> None:
    answer = client.get(f"{TABLES}/UPGRADED")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.json() == {
        "name": "upgraded",
        "schema": "s",
        "share": "hist",
        "shareId": "share-uuid",
        "id": "table-uuid",
        "format": "delta",
    }
    assert client.head(f"{TABLES}/upgraded").headers["delta-table-version"] == "2"


def test_get_table_of_an_unknown_table_is_a_404(server: RunningServer) -> None:
    with server.client() as client:
        for path in (f"{TABLES}/nope", "/shares/other/schemas/s/tables/upgraded"):
            missing = client.get(path)
            assert missing.status_code == 404
            assert missing.json()["errorCode"] == "RESOURCE_DOES_NOT_EXIST"
    with server.client("wrong-token") as stranger:
        assert stranger.get(f"{TABLES}/upgraded").status_code == 401


def test_our_client_gets_a_table(sharing: SharingClient) -> None:
    info = sharing.table("hist.s.upgraded").info()
    assert info == TableInfo("upgraded", "s", "hist", ("delta",), "share-uuid", "table-uuid")
    with pytest.raises(SharingError) as missing:
        sharing.table("hist.s.nope").info()
    assert missing.value.status == 404


def test_the_openapi_document_names_the_additions(server: RunningServer) -> None:
    document = httpx.get(server.url + "/openapi.json").json()
    table = document["paths"]["/shares/{share}/schemas/{schema}/tables/{table}"]
    assert table["get"]["operationId"] == "getTable"
    assert document["components"]["schemas"]["GetTable"]["required"] == [
        "name",
        "schema",
        "share",
        "format",
    ]
    for route, method in (("query", "post"), ("changes", "get")):
        operation = document["paths"][
            f"/shares/{{share}}/schemas/{{schema}}/tables/{{table}}/{route}"
        ]
        params = {p["name"]: p for p in operation[method]["parameters"]}
        assert params["fileidhash"]["in"] == "header"
        assert params["fileidhash"]["schema"]["enum"] == ["parquet", "delta"]
    changes_params = {
        p["name"]
        for p in document["paths"]["/shares/{share}/schemas/{schema}/tables/{table}/changes"][
            "get"
        ]["parameters"]
    }
    assert "includeHistoricalProtocol" in changes_params
    assert (
        "includeHistoricalProtocol" in document["components"]["schemas"]["QueryTable"]["properties"]
    )
