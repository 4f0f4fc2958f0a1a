"""Large answers: NDJSON in ~100 KB chunks, protocol and metadata first."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import httpx

from deltaport.catalog.model import SharedTable
from deltaport.protocol.actions import QueryTableRequest
from deltaport.protocol.capabilities import Capabilities
from deltaport.server.answers.ndjson import CHUNK_BYTES, chunked, encode_lines, encode_wrapped
from deltaport.server.files.signing import TableUrlSigner
from deltaport.server.tables.selection import HintSettings
from deltaport.server.tables.service import TableService
from deltaport.storage import parse_location
from deltaport.storage.local_urls import LocalUrlSigner

MANY = "/shares/sales/schemas/default/tables/many/query"


def test_large_answer_over_http(client: httpx.Client) -> None:
    with client.stream("POST", MANY, json={}) as response:
        assert response.status_code == 200
        assert response.headers["delta-table-version"] == "0"
        assert "content-length" not in response.headers
        body = response.read()
    lines = [json.loads(line) for line in body.splitlines()]
    assert len(lines) == 2 + 3000
    assert [f["file"]["size"] for f in lines[2:]] == [1000 + i for i in range(3000)]
    assert len({f["file"]["id"] for f in lines[2:]}) == 3000


def test_service_body_chunks(tables: dict[str, Path]) -> None:
    signer = LocalUrlSigner(b"k" * 32, "http://127.0.0.1:1/delta-sharing/files")
    service = TableService(TableUrlSigner(signer), timedelta(hours=1), HintSettings())
    table = SharedTable("s", "sc", "many", parse_location(str(tables["many"])), {})
    answer = service.query(table, Capabilities(), QueryTableRequest())
    chunks = [bytes(chunk) for chunk in answer.body]  # Arrow-built lines come as views
    head = chunks[0].splitlines()
    assert [next(iter(json.loads(x))) for x in head] == ["protocol", "metaData"]
    assert len(chunks) > 3
    assert all(len(c) >= CHUNK_BYTES for c in chunks[1:-1])
    assert all(c.endswith(b"\n") for c in chunks)
    assert sum(c.count(b"\n") for c in chunks) == 3002


def test_chunked_flushes_on_empty_segment_and_size() -> None:
    line = encode_lines([{"k": "x" * 100}])
    segments = [line, b"", *([line] * 1000), line]
    out = list(chunked(segments, chunk_bytes=50_000))
    assert out[0] == line
    assert all(len(c) >= 50_000 for c in out[1:-1])
    assert b"".join(out) == b"".join(segments)


def test_chunked_passes_big_segments_through_uncopied() -> None:
    small, big = b"a\n", b"b" * 60_000 + b"\n"
    out = list(chunked([big, small, big, b"", big], chunk_bytes=50_000))
    assert out[0] is big and out[-1] is big  # nothing pending before them: sent as they are
    assert out[1] == small + big  # after a pending line, joined to keep the order
    assert b"".join(out) == big + small + big + big


def test_encode_wrapped() -> None:
    values = [{"a": "line\nbreak"}, {"b": [1, 2]}]
    encoded = encode_wrapped("file", values)
    assert [json.loads(x) for x in encoded.splitlines()] == [{"file": v} for v in values]
    assert encode_wrapped("file", []) == b""


def test_limit_hint_on_many_files(client: httpx.Client) -> None:
    response = client.post(MANY, json={"limitHint": 95})
    files = [line for line in response.text.splitlines() if line.startswith('{"file"')]
    assert len(files) == 10


def test_stats_predicate_on_many_files(client: httpx.Client) -> None:
    response = client.post(MANY, json={"predicateHints": ["id >= 100", "id < 130"]})
    sizes = [json.loads(x)["file"]["size"] for x in response.text.splitlines()[2:]]
    assert sizes == [1010, 1011, 1012]
