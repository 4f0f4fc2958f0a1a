"""The official delta-sharing client (1.4.2) reads files through our signed local URLs.

A hand-made query endpoint answers with the actions of a small deltalake-written table
whose file URLs come from :class:`LocalUrlSigner`; the client runs in its own venv (see
``official_client_python``) in both of its read paths: parquet format (fsspec/aiohttp
HTTP) and delta format (delta-kernel-rs, which fetches over HTTP only for URLs carrying a
pre-signature query key such as ``sp``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pyarrow as pa
import pytest
from deltalake import write_deltalake
from starlette.applications import Starlette
from starlette.requests import Request

from deltaport.server.files.endpoint import files_routes
from deltaport.storage import parse_location
from deltaport.storage.local_urls import LocalUrlSigner
from emulators import (  # noqa: F401
    official_client_python,
    read_with_official_client,
    serve_asgi,
    sharing_query_lines,
    sharing_query_route,
    write_profile,
)

SECRET = b"official-client-test-secret-0123"
TABLE_KEY = "s.sc.t"
ROWS = [
    {"id": 1, "name": "a", "p": "plain"},
    {"id": 2, "name": "b", "p": "😈 a&b+c=d%e"},
    {"id": 3, "name": "c", "p": "x/y #?"},
    {"id": 4, "name": "d", "p": "plain"},
]


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("official") / "table"
    write_deltalake(str(path), pa.Table.from_pylist(ROWS), partition_by=["p"])
    return path


@pytest.fixture(scope="module")
def profiles(table: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Serves the table; yields the directory holding ``plain.share`` and ``nosp.share``
    (whose URLs lack the ``sp`` parameter)."""
    log = (table / "_delta_log" / "00000000000000000000.json").read_text()
    actions = [json.loads(line) for line in log.splitlines()]
    paths = [unquote(a["add"]["path"]) for a in actions if "add" in a]
    signers: dict[str, LocalUrlSigner] = {}

    def lines(request: Request, delta_format: bool) -> list[dict[str, Any]]:
        urls = signers["public"].sign_many(TABLE_KEY, paths, int(time.time()) + 600)
        if request.path_params["variant"] == "nosp":
            urls = [url.replace("&sp=r", "") for url in urls]
        return sharing_query_lines(actions, urls, delta_format)

    root = {TABLE_KEY: parse_location(str(table))}.get
    routes = [
        sharing_query_route("/{variant}", lines),
        *files_routes(LocalUrlSigner(SECRET, "/files"), root),
    ]
    directory = tmp_path_factory.mktemp("profiles")
    with serve_asgi(Starlette(routes=routes)) as base:
        signers["public"] = LocalUrlSigner(SECRET, f"{base}/files")
        for variant in ("plain", "nosp"):
            write_profile(directory, variant, f"{base}/{variant}")
        yield directory


@pytest.fixture(scope="module")
def results(official_client_python: Path, profiles: Path) -> dict[tuple[str, str], Any]:  # noqa: F811
    jobs = [(v, f) for v in ("plain", "nosp") for f in ("parquet", "delta")]
    outputs = read_with_official_client(
        official_client_python, [(profiles / f"{v}.share", f) for v, f in jobs]
    )
    return dict(zip(jobs, outputs, strict=True))


@pytest.mark.parametrize("fmt", ["parquet", "delta"])
def test_official_client_reads_local_signed_urls(results, fmt):
    assert results["plain", fmt] == {"rows": ROWS}


def test_delta_format_needs_a_recognised_signature_key(results):
    """Without ``sp`` the kernel takes the URL for a local path and the read fails: the
    reason the signer names its query parameters after Azure SAS."""
    error = results["nosp", "delta"]["error"]
    assert "/files/s.sc.t/" in error and "not found" in error
    assert results["nosp", "parquet"] == {"rows": ROWS}
