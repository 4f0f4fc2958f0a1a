"""A gate in front of Azurite that checks directory SAS (``sr=d``) as Azure does.

Azurite checks container and blob SAS but refuses every directory SAS (it has no
hierarchical namespace), so a reader given the directory SAS deltaport vends cannot reach
it directly. The gate takes the reader's requests in Azurite's URL shape
(``/<account>/<container>/<blob>``) and lets a request through only when its SAS is a
directory SAS signed with the account key over the directory made of the blob's first
``sdd`` path segments (Azure's rule: a blob outside the signed directory fails the
signature), unexpired, with ``r`` for reads; it refuses writes and container requests
(listings) with 403. What passes is sent on to Azurite with an account SAS in place of the
directory SAS. Every request is recorded with the gate's answer.
"""

from __future__ import annotations

import base64
import hmac
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

import httpx

from emulators import AzuriteEmulator

# the fields of a service SAS's string-to-sign after the canonical resource (version
# 2020-12-06 and later), each named by its query parameter
_SIGNED_AFTER_RESOURCE = (
    "si",
    "sip",
    "spr",
    "sv",
    "sr",
    "snapshot",
    "ses",
    "rscc",
    "rscd",
    "rsce",
    "rscl",
    "rsct",
)
_SAS_PARAMETERS = {"sp", "st", "se", "sdd", "sig", "skoid", "sktid", "skt", "ske", "sks"}
_SAS_PARAMETERS |= {"skv", *_SIGNED_AFTER_RESOURCE} - {"snapshot"}
_HOP_HEADERS = {"host", "connection", "transfer-encoding", "content-length", "keep-alive"}


@dataclass(frozen=True)
class GateRequest:
    method: str
    blob: str
    """``container/path`` as asked (decoded)."""
    status: int
    """The gate's refusal (403) or Azurite's answer."""


@dataclass
class DirectoryGate:
    endpoint: str
    """``http://127.0.0.1:PORT/<account>``: the blob endpoint readers are given."""
    requests: list[GateRequest] = field(default_factory=list)


def refusal(method: str, path: str, query: dict[str, str], emulator: AzuriteEmulator) -> str | None:
    """Why Azure would refuse this request with a directory SAS, or None."""
    if method not in ("GET", "HEAD"):
        return "read-only"
    parts = unquote(path).lstrip("/").split("/")
    if len(parts) < 3 or parts[0] != emulator.account or "restype" in query:
        return "not a blob of the account"
    container, blob = parts[1], parts[2:]
    if query.get("sr") != "d" or "skoid" in query or "r" not in query.get("sp", ""):
        return "not a directory SAS for reading signed with the account key"
    depth = int(query.get("sdd", "0"))
    if not 0 < depth < len(blob):
        return "the blob is not below a directory of the signed depth"
    expiry = datetime.strptime(query.get("se", ""), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    if expiry <= datetime.now(UTC):
        return "expired"
    directory = "/".join(blob[:depth])
    resource = f"/blob/{emulator.account}/{container}/{directory}"
    fields = [query.get("sp", ""), query.get("st", ""), query["se"], resource]
    fields += [query.get(name, "") for name in _SIGNED_AFTER_RESOURCE]
    key = base64.b64decode(emulator.key)
    signature = base64.b64encode(hmac.digest(key, "\n".join(fields).encode(), "sha256")).decode()
    if not hmac.compare_digest(signature, query.get("sig", "")):
        return "the signature does not cover this blob's directory"
    return None


def _handler(gate: DirectoryGate, emulator: AzuriteEmulator) -> type[BaseHTTPRequestHandler]:
    upstream = emulator.endpoint.rsplit("/", 1)[0]  # http://127.0.0.1:PORT
    client = httpx.Client(timeout=30)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            self._pass()

        def do_HEAD(self) -> None:
            self._pass()

        def do_PUT(self) -> None:
            self._pass()

        def do_DELETE(self) -> None:
            self._pass()

        def do_POST(self) -> None:
            self._pass()

        def _pass(self) -> None:
            url = urlsplit(self.path)
            query = dict(parse_qsl(url.query, keep_blank_values=True))
            blob = unquote(url.path).lstrip("/").split("/", 1)[-1]
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            if refusal(self.command, url.path, query, emulator) is not None:
                gate.requests.append(GateRequest(self.command, blob, 403))
                self._answer(403, {}, b"AuthorizationFailure")
                return
            kept = [(k, v) for k, v in query.items() if k not in _SAS_PARAMETERS]
            target = f"{upstream}{url.path}?{urlencode(kept)}&{emulator.account_sas('rl')}"
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_HEADERS}
            answer = client.request(self.command, target, headers=headers, content=body)
            gate.requests.append(GateRequest(self.command, blob, answer.status_code))
            kept_headers = {
                k: v for k, v in answer.headers.items() if k.lower() not in _HOP_HEADERS
            }
            if self.command == "HEAD":
                kept_headers["Content-Length"] = answer.headers.get("content-length", "0")
                self._answer(answer.status_code, kept_headers, None)
            else:
                self._answer(answer.status_code, kept_headers, answer.content)

        def _answer(self, status: int, headers: dict[str, str], body: bytes | None) -> None:
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            if body is not None:
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if body:
                self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass  # the requests are recorded in the gate, with their SAS left out

    return Handler


@contextmanager
def directory_gate(emulator: AzuriteEmulator) -> Iterator[DirectoryGate]:
    """A running gate in front of ``emulator`` on a free local port."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    gate = DirectoryGate(f"http://127.0.0.1:{server.server_address[1]}/{emulator.account}")
    server.RequestHandlerClass = _handler(gate, emulator)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield gate
    finally:
        server.shutdown()
        server.server_close()
