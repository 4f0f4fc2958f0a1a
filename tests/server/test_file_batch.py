"""``POST {files path}``: many local files in one answer, each URL checked as its GET
would be (a real server process, and the file routes on uvicorn in a thread)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware

from deltaport.protocol.file_batch import HEADER, MEDIA_TYPE, frames
from deltaport.server.files import file_batch
from deltaport.server.files.endpoint import files_routes
from deltaport.storage import Location, parse_location
from deltaport.storage.local_urls import LocalUrlSigner
from deltaport.web.body_limit import BodyLimit
from emulators import serve_asgi
from sharing_server import RunningServer, ndjson

SECRET = b"0123456789abcdef0123456789abcdef"
TABLE = "/shares/sales/schemas/default/tables/parted"


def answered(response: httpx.Response) -> list[tuple[int, bytes]]:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == MEDIA_TYPE
    return [(status, bytes(body)) for status, body in frames(response.content)]


def error_code(body: bytes) -> str:
    return str(httpx.Response(200, content=body).json()["errorCode"])


def test_query_answers_name_the_endpoint_and_it_sends_the_files(
    server: RunningServer, client: httpx.Client
) -> None:
    response = client.post(TABLE + "/query", json={})
    batch_url = response.headers[HEADER]
    assert batch_url == server.base + "/delta-sharing/files"
    urls = [line["file"]["url"] for line in ndjson(response) if "file" in line]
    assert len(urls) > 1
    got = answered(httpx.post(batch_url, json={"files": urls}))  # no bearer token needed
    assert [status for status, _ in got] == [200] * len(urls)
    for url, (_, body) in zip(urls, got, strict=True):
        assert body == httpx.get(url).content
    versions = client.post(TABLE + "/query", json={"startingVersion": 0})
    assert versions.status_code == 200
    assert versions.headers[HEADER] == batch_url


@pytest.fixture(scope="module")
def table_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("batch-tables")
    table = root / "table"
    (table / "a=1").mkdir(parents=True)
    (table / "a=1" / "one.bin").write_bytes(b"first file")
    (table / "two %#?.bin").write_bytes(bytes(range(256)) * 3)
    (table / "empty.bin").write_bytes(b"")
    (table / "big.bin").write_bytes(b"x" * 5000)
    (table / "subdir").mkdir()
    (root / "secret.txt").write_bytes(b"not shared")
    (table / "escape.bin").symlink_to(root / "secret.txt")
    return table


@pytest.fixture(scope="module")
def files_server(table_dir: Path) -> Iterator[tuple[str, LocalUrlSigner]]:
    tables: dict[str, Location] = {
        "t": parse_location(str(table_dir)),
        "cloud": parse_location("s3://bucket/table"),
    }
    app = Starlette(
        routes=files_routes(LocalUrlSigner(SECRET, "/files"), tables.get),
        middleware=[Middleware(BodyLimit, limit=1024 * 1024)],  # as create_app has it
    )
    with serve_asgi(app) as base:
        yield base, LocalUrlSigner(SECRET, f"{base}/files")


def later() -> int:
    return int(time.time()) + 600


def test_each_url_gets_what_its_get_would(files_server, table_dir: Path) -> None:
    base, signer = files_server
    sign = signer.sign
    urls = [
        sign("t", "a=1/one.bin", later()),
        sign("t", "two %#?.bin", later()),
        sign("t", "empty.bin", later()),
        sign("t", "a=1/one.bin", later()).replace("sig=", "sig=f"),  # tampered
        sign("t", "a=1/one.bin", int(time.time()) - 5),  # expired
        sign("t", "missing.bin", later()),
        sign("t", "subdir", later()),
        sign("t", "escape.bin", later()),
        sign("cloud", "x.parquet", later()),
        "http://elsewhere/files/t/a=1/one.bin?se=1&sp=r&sig=00",
        sign("t", "a=1/one.bin", later()),
    ]
    got = answered(httpx.post(f"{base}/files", json={"files": urls}))
    assert [status for status, _ in got] == [200, 200, 200, 403, 403, 404, 404, 403, 404, 403, 200]
    assert got[0][1] == got[-1][1] == b"first file"
    assert got[1][1] == (table_dir / "two %#?.bin").read_bytes()
    assert got[2][1] == b""
    assert {error_code(body) for status, body in got if status == 403} == {"PERMISSION_DENIED"}
    assert error_code(got[5][1]) == "RESOURCE_DOES_NOT_EXIST"
    for url, (status, _) in zip(urls[:9], got, strict=False):
        assert httpx.get(url).status_code == status


def test_big_files_are_left_to_their_own_get(files_server, monkeypatch) -> None:
    base, signer = files_server
    monkeypatch.setattr(file_batch, "FILE_MAX_BYTES", 4096)  # the app runs in this process
    urls = [signer.sign("t", "big.bin", later()), signer.sign("t", "a=1/one.bin", later())]
    got = answered(httpx.post(f"{base}/files", json={"files": urls}))
    assert [status for status, _ in got] == [413, 200]
    assert "GET it" in httpx.Response(200, content=got[0][1]).json()["message"]


def test_answers_span_several_chunks(files_server, monkeypatch) -> None:
    base, signer = files_server
    monkeypatch.setattr(file_batch, "CHUNK_BYTES", 700)
    urls = [signer.sign("t", "two %#?.bin", later())] * 7
    got = answered(httpx.post(f"{base}/files", json={"files": urls}))
    assert [len(body) for _, body in got] == [768] * 7


@pytest.mark.parametrize(
    ("body", "status"),
    [
        (b"not json", 400),
        (b'{"files": "a"}', 400),
        (b'{"files": [1]}', 400),
        (b'{"files": ["a"], "more": 1}', 400),
        (b'{"files": []}', 400),
        (b'{"files": [' + b",".join([b'"a"'] * 1001) + b"]}", 400),
        (b'{"files": ["' + b"a" * (5 * 1024 * 1024) + b'"]}', 413),
    ],
    ids=["json", "type", "item", "unknown", "empty", "too-many", "too-big"],
)
def test_bad_bodies(files_server, body: bytes, status: int) -> None:
    base, _ = files_server
    response = httpx.post(f"{base}/files", content=body, timeout=30)
    assert response.status_code == status
    code = "REQUEST_TOO_LARGE" if status == 413 else "INVALID_PARAMETER_VALUE"
    assert response.json()["errorCode"] == code


def test_urls_that_do_not_parse_get_a_403_frame(files_server) -> None:
    """Found by the API fuzz: a malformed host made the answer stop after its 200 began."""
    base, signer = files_server
    urls = [
        "http://[x",
        "http://[::1/files/t/a=1/one.bin",
        signer.sign("t", "a=1/one.bin", later()),
    ]
    got = answered(httpx.post(f"{base}/files", json={"files": urls}))
    assert [status for status, _ in got] == [403, 403, 200]
    assert {error_code(body) for _, body in got[:2]} == {"PERMISSION_DENIED"}
