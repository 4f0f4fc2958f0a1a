"""The ``http.response.zerocopysend`` extension of the server's HTTP protocol, over real
sockets: uvicorn in a thread on 127.0.0.1 with :class:`ZeroCopyHttpToolsProtocol`."""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio.to_thread
import httpx
import pyarrow as pa
import pytest
from deltalake import WriterProperties, write_deltalake

import deltaport
import deltaport.listeners.serving as serving
from deltaport.listeners.tls import self_signed_certificate
from deltaport.server.files import zero_copy
from deltaport.server.files.endpoint import ONE_READ_MAX_BYTES
from deltaport.server.files.zero_copy import (
    ZERO_COPY_SEND,
    ZeroCopyHttpToolsProtocol,
    zero_copy_protocol,
)
from emulators import (  # noqa: F401 - official_client_python is a fixture
    official_client_python,
    read_with_official_client,
    serve_asgi,
    write_profile,
)
from sharing_server import RunningServer, start_server, stop_server, table_entry

FILE_SIZE = 24 * 1024 * 1024 + 17
COPIED_BODY = b"0123456789abcdef" * (2 * 1024 * 1024)


@pytest.fixture(scope="module")
def data_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("zero-copy") / "data.bin"
    path.write_bytes(os.urandom(FILE_SIZE))
    return path


def file_app(path: Path, seen: list[dict[str, Any]]) -> Any:
    """``/file?offset=A&count=B`` sends that part of ``path`` zero-copy (all of it without
    parameters); ``/copied`` sends ``COPIED_BODY`` the ordinary way; ``/chunked`` tries a
    zero-copy send without Content-Length; ``/extensions`` lists what the server offers."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen.append(scope)
        query = dict(p.split("=") for p in scope["query_string"].decode().split("&") if p)
        if scope["path"] == "/extensions":
            body = ",".join(sorted(scope.get("extensions", {}))).encode()
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": body})
        elif scope["path"] == "/threaded":  # a request served from a worker thread
            limiter = anyio.to_thread.current_default_thread_limiter()
            limiter.total_tokens = int(query.get("threads", limiter.total_tokens))
            await anyio.to_thread.run_sync(lambda: None)
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"ok"})
        elif scope["path"] == "/copied":
            headers = [(b"content-length", str(len(COPIED_BODY)).encode())]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": COPIED_BODY})
        elif scope["path"] == "/chunked":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            with path.open("rb") as file:
                try:
                    await send({"type": ZERO_COPY_SEND, "file": file})
                except RuntimeError as exc:
                    await send({"type": "http.response.body", "body": str(exc).encode()})
        else:
            offset = int(query.get("offset", 0))
            count = int(query.get("count", path.stat().st_size - offset))
            length = int(query.get("length", count))
            headers = [(b"content-length", str(length).encode())]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            with path.open("rb") as file:
                message = {"type": ZERO_COPY_SEND, "file": file, "offset": offset, "count": count}
                await send(message)

    return app


@pytest.fixture
def seen() -> list[dict[str, Any]]:
    return []


@pytest.fixture
def base(data_file: Path, seen: list[dict[str, Any]]) -> Iterator[str]:
    with serve_asgi(file_app(data_file, seen), http=ZeroCopyHttpToolsProtocol) as url:
        yield url


def _connect(base: str) -> socket.socket:
    host, port = base.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=30)


def _read_response(reader: Any, head: bool = False) -> tuple[int, dict[str, str], bytes]:
    status = int(reader.readline().split()[1])
    headers: dict[str, str] = {}
    while (line := reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode().partition(":")
        headers[name.strip().lower()] = value.strip()
    body = b"" if head else reader.read(int(headers.get("content-length", 0)))
    return status, headers, body


def test_offered_on_plain_http_only(data_file: Path, base: str, tmp_path: Path) -> None:
    assert ZERO_COPY_SEND in httpx.get(base + "/extensions").text.split(",")
    tls = self_signed_certificate("127.0.0.1", tmp_path)
    app = file_app(data_file, [])
    certificate = {"ssl_certfile": tls.certfile, "ssl_keyfile": tls.keyfile}
    with (
        serve_asgi(app, http=ZeroCopyHttpToolsProtocol, **certificate) as https,
        httpx.Client(verify=False, timeout=30) as client,
    ):
        assert ZERO_COPY_SEND not in client.get(https + "/extensions").text.split(",")


def test_offered_under_the_path_prefix_only(data_file: Path) -> None:
    app = file_app(data_file, [])
    with serve_asgi(app, http=zero_copy_protocol("/ext")) as url:
        assert ZERO_COPY_SEND in httpx.get(url + "/extensions").text.split(",")
    with serve_asgi(app, http=zero_copy_protocol("/file")) as url:
        assert ZERO_COPY_SEND not in httpx.get(url + "/extensions").text.split(",")
        assert httpx.get(url + "/file", timeout=30).content == data_file.read_bytes()


def test_whole_file_then_parts_on_one_connection(data_file: Path, base: str) -> None:
    expected = data_file.read_bytes()
    with _connect(base) as sock, sock.makefile("rb") as reader:
        for target, part in (
            ("/file", expected),
            ("/file?offset=5&count=1000", expected[5:1005]),
            ("/file?offset=1048000&count=3000000", expected[1048000:4048000]),
            ("/file?offset=0&count=0", b""),
        ):
            sock.sendall(f"GET {target} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            status, headers, body = _read_response(reader)
            assert (status, body == part) == (200, True), target
        sock.sendall(b"HEAD /file HTTP/1.1\r\nHost: x\r\n\r\n")
        status, headers, _ = _read_response(reader, head=True)
        assert headers["content-length"] == str(FILE_SIZE)
        sock.sendall(b"GET /file?offset=7&count=9 HTTP/1.1\r\nHost: x\r\n\r\n")
        assert _read_response(reader)[2] == expected[7:16]  # the HEAD left no body behind


def test_pipelined_answer_leaves_after_the_bytes_before_it(data_file: Path, base: str) -> None:
    requests = b"GET /copied HTTP/1.1\r\nHost: x\r\n\r\nGET /file HTTP/1.1\r\nHost: x\r\n\r\n"
    with _connect(base) as sock, sock.makefile("rb") as reader:
        sock.sendall(requests)
        time.sleep(0.5)  # the copied answer fills the socket; the rest waits in uvicorn
        assert _read_response(reader)[2] == COPIED_BODY
        assert _read_response(reader)[2] == data_file.read_bytes()


def test_without_content_length_it_is_refused(base: str) -> None:
    response = httpx.get(base + "/chunked")
    assert response.status_code == 200
    assert response.text == f"'{ZERO_COPY_SEND}' needs a response with Content-Length"


def test_more_than_content_length_is_refused(base: str) -> None:
    with pytest.raises(httpx.RemoteProtocolError):
        httpx.get(base + "/file?offset=0&count=100&length=10")


def test_file_shorter_than_promised_closes_the_connection(base: str) -> None:
    with pytest.raises(httpx.RemoteProtocolError):
        httpx.get(base + f"/file?offset={FILE_SIZE - 10}&count=20")


def test_client_going_away_mid_file(
    data_file: Path, base: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO):
        for _ in range(3):
            with _connect(base) as sock:
                sock.sendall(b"GET /file HTTP/1.1\r\nHost: x\r\n\r\n")
                sock.recv(65536)
        assert httpx.get(base + "/file", timeout=30).content == data_file.read_bytes()
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_stalled_client_is_disconnected(
    data_file: Path, base: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(zero_copy, "STALLED_CLIENT_SECONDS", 0.5)
    with _connect(base) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        sock.sendall(b"GET /file HTTP/1.1\r\nHost: x\r\n\r\n")
        time.sleep(2)  # reads nothing while the server waits for room
        received = 0
        started = time.monotonic()
        while chunk := sock.recv(1 << 20):
            received += len(chunk)
        assert received < FILE_SIZE  # the server closed the connection part way
        assert time.monotonic() - started < 20
    assert len(httpx.get(base + "/file", timeout=30).content) == FILE_SIZE


class _BufferingTransport:
    """A transport over one end of a real socket pair that still holds ``pending`` bytes
    of earlier writes, flushing a thousand of them each time it is asked."""

    def __init__(self, sock: socket.socket, pending: int) -> None:
        self.sock = sock
        self.pending = pending

    def get_write_buffer_size(self) -> int:
        self.pending = max(0, self.pending - 1000)
        return self.pending

    def get_extra_info(self, name: str) -> Any:
        return self.sock if name == "socket" else None


def test_file_bytes_wait_for_the_transports_buffer(
    data_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[bytes] = []

    async def uvicorn_send(message: dict[str, Any]) -> None:
        sent.append(message["body"])

    pending_when_sending: list[int] = []
    send_file = zero_copy._sendfile_all

    def recording_send_file(*args: int) -> None:
        pending_when_sending.append(transport.pending)
        send_file(*args)

    monkeypatch.setattr(zero_copy, "_sendfile_all", recording_send_file)
    left, right = socket.socketpair()
    with left, right, data_file.open("rb") as file:
        left.setblocking(False)
        transport = _BufferingTransport(left, pending=5000)
        cycle = SimpleNamespace(
            scope={"method": "GET"},
            transport=transport,
            send=uvicorn_send,
            response_started=True,
            response_complete=False,
            chunked_encoding=False,
            disconnected=False,
            expected_content_length=10,
        )
        send = zero_copy._ZeroCopySend(cycle)  # type: ignore[arg-type]
        message = {"type": ZERO_COPY_SEND, "file": file, "offset": 3, "count": 10}
        asyncio.run(send(message))
        assert right.recv(100) == data_file.read_bytes()[3:13]
    assert pending_when_sending == [0]
    assert sent == [b""] and cycle.expected_content_length == 0


def test_the_server_runs_with_the_protocol(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Any] = []
    monkeypatch.setattr(serving, "serve_all", lambda configs, *_: calls.extend(configs))
    pools: list[pa.MemoryPool] = []
    monkeypatch.setattr(serving.pa, "set_memory_pool", pools.append)
    config = tmp_path / "server.yaml"
    config.write_text("version: 1\nshares: []\n")
    serving.run(config, port=1)
    assert [pool.backend_name for pool in pools] == [serving.memory_pool().backend_name]
    assert len(calls) == 1  # no admin listener configured
    protocol = calls[0].http
    assert issubclass(protocol, ZeroCopyHttpToolsProtocol)
    assert protocol.path_prefix == "/delta-sharing/files/"


def test_the_server_allocates_with_jemalloc_or_the_c_library(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert serving.memory_pool().backend_name == "jemalloc"

    def no_jemalloc() -> pa.MemoryPool:
        raise pa.ArrowNotImplementedError("This Arrow build does not enable jemalloc")

    monkeypatch.setattr(serving.pa, "jemalloc_memory_pool", no_jemalloc)
    assert serving.memory_pool().backend_name == "system"


def test_slow_recipients_hold_only_the_sending_threads(
    base: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(zero_copy, "SENDING_THREADS", 2)
    assert httpx.get(base + "/threaded?threads=2").text == "ok"
    stalled = [_connect(base) for _ in range(3)]
    try:
        for sock in stalled:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
            sock.sendall(b"GET /file HTTP/1.1\r\nHost: x\r\n\r\n")
        time.sleep(1)  # two files fill their sockets, the third waits for a thread
        assert httpx.get(base + "/threaded", timeout=5).text == "ok"
        stalled[2].settimeout(1)
        head = stalled[2].recv(1 << 20)
        assert head.startswith(b"HTTP/1.1 200") and head.endswith(b"\r\n\r\n")
    finally:
        for sock in stalled:
            sock.close()


def test_file_systems_without_sendfile_are_copied(
    data_file: Path, base: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_sendfile(*args: object) -> int:
        raise OSError(errno.EINVAL, "Invalid argument")

    monkeypatch.setattr(os, "sendfile", no_sendfile)
    expected = data_file.read_bytes()
    assert httpx.get(base + "/file", timeout=30).content == expected
    part = httpx.get(base + "/file?offset=1048570&count=1048600", timeout=30).content
    assert part == expected[1048570 : 1048570 + 1048600]


@pytest.fixture(scope="module")
def big_file_server(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[RunningServer, pa.Table]]:
    """A real server process sharing table ``s.sc.t``, one data file of several MiB; with
    the table's rows."""
    root = tmp_path_factory.mktemp("big-file")
    rows = 60_000
    ids = pa.array(range(rows), pa.int64())
    data = pa.table({"id": ids, "s": [os.urandom(16).hex() for _ in range(rows)]})
    properties = WriterProperties(compression="UNCOMPRESSED")
    write_deltalake(str(root / "t"), data, writer_properties=properties)
    assert min(p.stat().st_size for p in (root / "t").glob("*.parquet")) > ONE_READ_MAX_BYTES
    share = {"name": "s", "schemas": [{"name": "sc", "tables": [table_entry("t", root / "t")]}]}
    config = {"authorization": {"bearerToken": "token"}, "shares": [share]}
    server = start_server(config, root / "server")
    try:
        yield server, data
    finally:
        stop_server(server)


def test_server_process_sends_big_files_to_both_clients(
    big_file_server: tuple[RunningServer, pa.Table],
    official_client_python: Path,  # noqa: F811 - the fixture
    tmp_path: Path,
) -> None:
    server, data = big_file_server
    profile = write_profile(tmp_path, "big", server.url)
    expected = data.column("s").to_pylist()
    ours = deltaport.load_as_arrow(f"{profile}#s.sc.t").sort_by("id")
    assert ours.column("s").to_pylist() == expected
    jobs = [(profile, "parquet"), (profile, "delta")]
    for result in read_with_official_client(official_client_python, jobs):
        assert "error" not in result, result.get("error")
        assert [row["s"] for row in result["rows"]] == expected
