"""Metadata, query, predicates, limit, time travel and format negotiation (real server)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa
from deltalake import DeltaTable

from deltaport.server.answers.file_ids import file_id
from sharing_server import ndjson

TABLE = "/shares/sales/schemas/default/tables"
DELTA_CAPS = {"delta-sharing-capabilities": "responseformat=delta"}


def query(client: httpx.Client, table: str, body: Any = None, **kw: Any) -> httpx.Response:
    return client.post(f"{TABLE}/{table}/query", json={} if body is None else body, **kw)


def file_lines(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [line["file"] for line in lines if "file" in line]


def partition_of(files: list[dict[str, Any]]) -> list[str]:
    return sorted(f["partitionValues"]["region"] for f in files)


def test_version_head_and_starting_timestamp(client: httpx.Client) -> None:
    response = client.get(f"{TABLE}/parted/version")
    assert response.status_code == 200
    assert response.headers["delta-table-version"] == "2"
    assert response.content == b""
    head = client.head(f"{TABLE}/parted")
    assert head.status_code == 200
    assert head.headers["delta-table-version"] == "2"
    cases = {
        "2023-12-31T00:00:00Z": "0",
        "2024-01-01T00:30:00Z": "1",
        "2024-01-01T01:00:00Z": "1",
        "2024-01-01T03:30:00+02:00": "2",
    }
    for stamp, expected in cases.items():
        response = client.get(f"{TABLE}/parted/version", params={"startingTimestamp": stamp})
        assert response.status_code == 200, response.text
        assert response.headers["delta-table-version"] == expected, stamp
    response = client.get(f"{TABLE}/parted/version", params={"startingTimestamp": "yesterday"})
    assert response.status_code == 400
    response = client.get(f"{TABLE}/basic/version", params={"startingTimestamp": "2024-01-01"})
    assert response.status_code == 400
    assert "history sharing" in response.json()["message"]


def test_metadata_parquet_format(client: httpx.Client, tables: dict[str, Path]) -> None:
    response = client.get(f"{TABLE}/parted/metadata")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/x-ndjson")
    assert response.headers["delta-table-version"] == "2"
    assert response.headers["delta-sharing-capabilities"] == "responseformat=parquet"
    protocol, metadata = ndjson(response)
    assert protocol == {"protocol": {"minReaderVersion": 1}}
    meta = metadata["metaData"]
    expected = DeltaTable(str(tables["parted"]))
    assert meta["id"] == expected.metadata().id
    assert meta["partitionColumns"] == ["region"]
    assert json.loads(meta["schemaString"])["fields"][0]["name"] == "id"
    actions = pa.table(expected.get_add_actions(flatten=True))
    assert meta["numFiles"] == actions.num_rows == 3
    assert meta["size"] == sum(actions.column("size_bytes").to_pylist())
    assert meta["accessModes"] == ["url"]
    assert "version" not in meta


def test_metadata_delta_format_carries_size_files_and_access_modes(client: httpx.Client) -> None:
    response = client.get(
        f"{TABLE}/parted/metadata", headers={"delta-sharing-capabilities": "responseformat=delta"}
    )
    assert response.headers["delta-sharing-capabilities"].startswith("responseformat=delta")
    meta = ndjson(response)[1]["metaData"]
    assert meta["numFiles"] == 3
    assert meta["size"] > 0
    assert meta["accessModes"] == ["url"]
    assert meta["deltaMetadata"]["partitionColumns"] == ["region"]


def test_metadata_time_travel(client: httpx.Client) -> None:
    response = client.get(f"{TABLE}/parted/metadata", params={"version": 0})
    assert response.headers["delta-table-version"] == "0"
    assert ndjson(response)[1]["metaData"]["version"] == 0
    assert ndjson(response)[1]["metaData"]["numFiles"] == 1
    response = client.get(f"{TABLE}/parted/metadata", params={"timestamp": "2024-01-01T01:10:00Z"})
    assert response.headers["delta-table-version"] == "1"
    assert client.get(f"{TABLE}/parted/metadata", params={"version": -1}).status_code == 400
    assert client.get(f"{TABLE}/parted/metadata", params={"version": "x"}).status_code == 400
    assert client.get(f"{TABLE}/basic/metadata", params={"version": 0}).status_code == 400


def test_query_latest_matches_deltalake(client: httpx.Client, tables: dict[str, Path]) -> None:
    response = query(client, "parted")
    assert response.status_code == 200
    assert response.headers["delta-table-version"] == "2"
    lines = ndjson(response)
    assert list(lines[0]) == ["protocol"]
    assert list(lines[1]) == ["metaData"]
    files = file_lines(lines)
    actions = pa.table(DeltaTable(str(tables["parted"])).get_add_actions(flatten=True))
    by_id = {file_id(a["path"]): a for a in actions.to_pylist()}
    assert len(files) == len(actions) == 3
    assert {f["id"] for f in files} == set(by_id)
    for f in files:
        assert f["url"].startswith("http://127.0.0.1:")
        assert f["expirationTimestamp"] > 0
        assert "version" not in f and "timestamp" not in f
        assert json.loads(f["stats"])["numRecords"] == 5
        action = by_id[f["id"]]
        assert f["size"] == action["size_bytes"]
        assert f["partitionValues"] == {"region": action["partition.region"]}


def test_file_ids_are_stable(client: httpx.Client) -> None:
    first = {f["id"] for f in file_lines(ndjson(query(client, "parted")))}
    second = {f["id"] for f in file_lines(ndjson(query(client, "parted")))}
    assert first == second and len(first) == 3


def test_query_time_travel(client: httpx.Client) -> None:
    response = query(client, "parted", {"version": 1})
    assert response.headers["delta-table-version"] == "1"
    lines = ndjson(response)
    assert lines[1]["metaData"]["version"] == 1
    files = file_lines(lines)
    assert partition_of(files) == ["eu", "us"]
    assert all(f["version"] == 1 and f["timestamp"] > 0 for f in files)
    response = query(client, "parted", {"timestamp": "2024-01-01T00:59:59Z"})
    assert response.headers["delta-table-version"] == "0"
    assert partition_of(file_lines(ndjson(response))) == ["eu"]


def test_query_parameter_errors(client: httpx.Client) -> None:
    cases: list[tuple[Any, str]] = [
        ({"version": -1}, "INVALID_PARAMETER_VALUE"),
        ({"version": 99}, "INVALID_PARAMETER_VALUE"),
        ({"version": 0, "timestamp": "2024-01-01T00:00:00Z"}, "INVALID_PARAMETER_VALUE"),
        ({"timestamp": "2020-01-01T00:00:00Z"}, "INVALID_PARAMETER_VALUE"),
        ({"timestamp": "not a time"}, "INVALID_PARAMETER_VALUE"),
        ({"limitHint": -3}, "INVALID_PARAMETER_VALUE"),
        ({"version": "one"}, "MALFORMED_REQUEST"),
        ({"predicateHints": "a = 1"}, "MALFORMED_REQUEST"),
        ([1, 2], "MALFORMED_REQUEST"),
    ]
    for body, code in cases:
        response = query(client, "parted", body)
        assert response.status_code == 400, (body, response.text)
        assert response.json()["errorCode"] == code, body
    response = client.post(f"{TABLE}/parted/query", content=b'{"version": ')
    assert response.status_code == 400
    assert response.json()["errorCode"] == "MALFORMED_REQUEST"
    response = query(client, "basic", {"version": 0})
    assert response.status_code == 400
    assert "history sharing" in response.json()["message"]


def test_empty_body_means_latest(client: httpx.Client) -> None:
    response = client.post(f"{TABLE}/parted/query", content=b"")
    assert response.status_code == 200
    assert len(file_lines(ndjson(response))) == 3


def test_predicate_hints_prune_partitions(client: httpx.Client) -> None:
    sql = query(client, "parted", {"predicateHints": ["region = 'us'"]})
    assert partition_of(file_lines(ndjson(sql))) == ["us"]
    json_hint = json.dumps(
        {
            "op": "equal",
            "children": [
                {"op": "column", "name": "region", "valueType": "string"},
                {"op": "literal", "value": "asia", "valueType": "string"},
            ],
        }
    )
    response = query(client, "parted", {"jsonPredicateHints": json_hint})
    assert partition_of(file_lines(ndjson(response))) == ["asia"]
    stats = query(client, "parted", {"predicateHints": ["id >= 20"]})
    assert partition_of(file_lines(ndjson(stats))) == ["asia"]


def test_unusable_predicates_keep_every_file(client: httpx.Client) -> None:
    bodies = [
        {"predicateHints": ["this is not sql ((("]},
        {"predicateHints": ["no_such_column = 3"]},
        {"jsonPredicateHints": "{not json"},
        {"jsonPredicateHints": json.dumps({"op": "frobnicate", "children": []})},
    ]
    for body in bodies:
        response = query(client, "parted", body)
        assert response.status_code == 200, body
        assert len(file_lines(ndjson(response))) == 3, body
    mixed = query(client, "parted", {"predicateHints": ["region = 'eu'", "garbage((("]})
    assert partition_of(file_lines(ndjson(mixed))) == ["eu"]


def test_limit_hint(client: httpx.Client) -> None:
    assert len(file_lines(ndjson(query(client, "parted", {"limitHint": 1})))) == 1
    assert len(file_lines(ndjson(query(client, "parted", {"limitHint": 5})))) == 1
    assert len(file_lines(ndjson(query(client, "parted", {"limitHint": 6})))) == 2
    assert len(file_lines(ndjson(query(client, "parted", {"limitHint": 1000})))) == 3
    filtered = query(client, "parted", {"predicateHints": ["region <> 'eu'"], "limitHint": 1})
    files = file_lines(ndjson(filtered))
    assert len(files) == 1 and files[0]["partitionValues"]["region"] != "eu"


def test_deletion_vector_table_needs_delta_format(client: httpx.Client) -> None:
    for headers in ({}, {"delta-sharing-capabilities": "responseformat=parquet"}):
        response = query(client, "dv", headers=headers)
        assert response.status_code == 400
        body = response.json()
        assert body["errorCode"] == "UNSUPPORTED_OPERATION"
        assert "responseformat=delta" in body["message"]
    metadata = client.get(f"{TABLE}/dv/metadata")
    assert metadata.status_code == 400


def test_delta_format_with_deletion_vectors(client: httpx.Client) -> None:
    response = query(client, "dv", headers=DELTA_CAPS)
    assert response.status_code == 200, response.text
    assert response.headers["delta-sharing-capabilities"] == "responseformat=delta"
    protocol, metadata, *files = ndjson(response)
    assert protocol["protocol"]["deltaProtocol"]["readerFeatures"] == ["deletionVectors"]
    meta = metadata["metaData"]
    assert meta["deltaMetadata"]["id"] == "testId"
    assert meta["version"] == 1 and meta["numFiles"] == 1
    (line,) = files
    add = line["file"]["deltaSingleAction"]["add"]
    assert add["path"].startswith("http://127.0.0.1:")
    dv = add["deletionVector"]
    assert dv["storageType"] == "p"
    assert dv["pathOrInlineDv"].startswith("http://127.0.0.1:")
    assert "deletion_vector_" in dv["pathOrInlineDv"]
    assert dv["cardinality"] > 0
    assert line["file"]["expirationTimestamp"] > 0


def test_format_lists_prefer_parquet_when_possible(client: httpx.Client) -> None:
    both = {"delta-sharing-capabilities": "responseformat=delta,parquet;readerfeatures=x"}
    response = query(client, "parted", headers=both)
    assert response.headers["delta-sharing-capabilities"] == "responseformat=parquet"
    assert "url" in file_lines(ndjson(response))[0]
    response = query(client, "dv", headers=both)
    assert response.status_code == 400  # deletionVectors is not among the reader features
    caps = {
        "delta-sharing-capabilities": "ResponseFormat=Delta,Parquet;ReaderFeatures=deletionVectors"
    }
    response = query(client, "dv", headers=caps)
    assert response.headers["delta-sharing-capabilities"] == "responseformat=delta"
    response = query(client, "parted", headers=DELTA_CAPS)
    assert response.headers["delta-sharing-capabilities"] == "responseformat=delta"
    add = file_lines(ndjson(response))[0]["deltaSingleAction"]["add"]
    assert {"path", "partitionValues", "size", "modificationTime", "dataChange"} <= set(add)
    bad = query(client, "parted", headers={"delta-sharing-capabilities": "responseformat=csv"})
    assert bad.status_code == 400


def test_column_mapping_table_in_delta_format(client: httpx.Client) -> None:
    assert query(client, "cm").status_code == 400
    response = query(client, "cm", headers=DELTA_CAPS)
    assert response.status_code == 200
    _, metadata, *files = ndjson(response)
    config = metadata["metaData"]["deltaMetadata"]["configuration"]
    assert config["delta.columnMapping.mode"] == "name"
    assert files


def test_end_stream_action(client: httpx.Client) -> None:
    caps = {"delta-sharing-capabilities": "responseformat=parquet;includeendstreamaction=true"}
    response = query(client, "parted", headers=caps)
    assert "includeendstreamaction=true" in response.headers["delta-sharing-capabilities"]
    lines = ndjson(response)
    end = lines[-1]["endStreamAction"]
    assert end["minUrlExpirationTimestamp"] == min(
        f["expirationTimestamp"] for f in file_lines(lines)
    )
