"""File downloads on the lean path (``http.client`` for http://, the client's own pool
for https://) against real servers on 127.0.0.1, and the cases left to ``httpx``."""

from __future__ import annotations

import gc
import gzip
import socket
import threading
import time
import weakref
from collections.abc import Iterator

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from deltaport.client import new_http_client
from deltaport.client.files.downloads import Body, Downloads, direct_pool, downloads_for
from deltaport.server.files.endpoint import files_routes
from deltaport.storage import parse_location
from deltaport.storage.local_urls import LocalUrlSigner
from emulators import serve_asgi

SECRET = b"downloads-test-secret-0123456789"
CONTENT = bytes(range(256)) * 40


def _gzipped(request: Request) -> Response:
    return Response(gzip.compress(CONTENT), headers={"Content-Encoding": "gzip"})


def _refused(request: Request) -> Response:
    return Response(b'{"errorCode":"PERMISSION_DENIED","message":"no"}', status_code=403)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, LocalUrlSigner]]:
    root = tmp_path_factory.mktemp("downloads") / "table"
    root.mkdir()
    (root / "data.bin").write_bytes(CONTENT)
    tables = {"t": parse_location(str(root))}
    app = Starlette(
        routes=[
            *files_routes(LocalUrlSigner(SECRET, "/files"), tables.get),
            Route("/gzip", _gzipped),
            Route("/refused", _refused),
            Route("/moved", lambda _: RedirectResponse("/gzip")),
        ]
    )
    with serve_asgi(app) as base:
        yield base, LocalUrlSigner(SECRET, f"{base}/files")


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with new_http_client(max_connections=4) as client:
        yield client


def _signed(signer: LocalUrlSigner) -> str:
    return signer.sign("t", "data.bin", int(time.time()) + 600)


def test_plain_clients_take_the_direct_path() -> None:
    with new_http_client() as plain, httpx.Client() as default:
        assert direct_pool(plain) is not None
        assert direct_pool(default) is not None
    with httpx.Client(proxy="http://127.0.0.1:9") as proxied:
        assert direct_pool(proxied) is None
    with httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(200))) as mocked:
        assert direct_pool(mocked) is None


def test_whole_file_and_range(server, http) -> None:
    _, signer = server
    url = _signed(signer)
    downloads = Downloads(http)
    assert downloads.get(url) == Body(200, CONTENT)
    assert downloads.get(url, "bytes=10-19") == Body(206, CONTENT[10:20])


def test_connections_are_kept_between_files(server, http) -> None:
    _, signer = server
    downloads = Downloads(http)
    for _ in range(5):
        assert downloads.get(_signed(signer)) == Body(200, CONTENT)
    idle = downloads._plain._idle
    assert sum(len(c) for c in idle.values()) == 1


def test_refusals_are_httpx_responses(server, http) -> None:
    base, _ = server
    answer = Downloads(http).get(f"{base}/refused")
    assert isinstance(answer, httpx.Response)
    assert answer.status_code == 403
    assert answer.json()["errorCode"] == "PERMISSION_DENIED"


def test_compressed_bodies_and_redirects_are_left_to_httpx(server, http) -> None:
    base, _ = server
    downloads = Downloads(http)
    assert downloads.get(f"{base}/gzip") == Body(200, CONTENT)
    assert downloads.get(f"{base}/moved") == Body(200, CONTENT)


def test_urls_with_credentials_are_left_to_httpx(server, http) -> None:
    base, _ = server
    with_user = base.replace("http://", "http://user:secret@") + "/gzip"
    downloads = Downloads(http)
    assert downloads.get(with_user) == Body(200, CONTENT)
    assert not downloads._plain._idle


def test_other_clients_are_used_as_they_are() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("range", ""))
        return httpx.Response(206, content=b"abc")

    with httpx.Client(transport=httpx.MockTransport(handler)) as mocked:
        assert Downloads(mocked).get("http://example.invalid/f", "bytes=0-2") == Body(206, b"abc")
    assert seen == ["bytes=0-2"]


def test_refused_connection_is_an_httpx_transport_error(http) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(httpx.ConnectError):
        Downloads(http).get(f"http://127.0.0.1:{port}/f")


class OneResponsePerConnection:
    """A server that answers one request per connection and then closes it without
    saying so (no ``Connection: close``), as a server whose keep-alive timed out."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                request = b""
                while b"\r\n\r\n" not in request:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    request += chunk
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")


def test_a_connection_closed_while_idle_is_replaced(http) -> None:
    server = OneResponsePerConnection()
    downloads = Downloads(http)
    try:
        for _ in range(3):
            assert downloads.get(f"http://127.0.0.1:{server.port}/f") == Body(200, b"hello")
            time.sleep(0.05)  # lets the server close the connection before it is reused
    finally:
        server.sock.close()
    assert server.connections == 3


def test_one_instance_per_client_not_keeping_it_alive() -> None:
    client = new_http_client()
    assert downloads_for(client) is downloads_for(client)
    gone = weakref.ref(client)
    client.close()
    del client
    gc.collect()
    assert gone() is None
