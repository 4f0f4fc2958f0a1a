"""The official delta-sharing client (1.4.2) reads Delta tables in S3 (moto) and Azure
(Azurite) through URLs from ``Storage.sign``, in both response formats.

This checks what the emulators alone cannot: that the client's HTTP stacks (fsspec/aiohttp
for parquet format, delta-kernel-rs for delta format) fetch our pre-signed URLs unchanged,
including escaped partition directories.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from deltalake import write_deltalake
from starlette.applications import Starlette
from starlette.requests import Request

from deltaport.storage import Storage, resolve_log_path
from emulators import (  # noqa: F401
    AzuriteEmulator,
    S3Emulator,
    azurite,
    official_client_python,
    read_with_official_client,
    s3_emulator,
    serve_asgi,
    sharing_query_lines,
    sharing_query_route,
    write_profile,
)

ROWS = [
    {"id": 1, "p": "plain"},
    {"id": 2, "p": "😈 a&b+c=d%e"},
    {"id": 3, "p": "x/y #?"},
]


def _actions(storage: Storage) -> list[dict[str, Any]]:
    log = storage.read(storage.resolve("_delta_log/00000000000000000000.json")).decode()
    return [json.loads(line) for line in log.splitlines()]


@pytest.fixture(scope="module")
def s3_storage(s3_emulator: S3Emulator) -> Storage:  # noqa: F811
    s3_emulator.create_bucket("official")
    uri = "s3://official/table"
    write_deltalake(
        uri,
        pa.Table.from_pylist(ROWS),
        partition_by=["p"],
        storage_options=s3_emulator.deltalake_options,
    )
    return Storage(uri, s3_emulator.options)


@pytest.fixture(scope="module")
def azure_storage(azurite: AzuriteEmulator) -> Storage:  # noqa: F811
    azurite.create_container("official")
    uri = "az://official/table"
    write_deltalake(
        uri,
        pa.Table.from_pylist(ROWS),
        partition_by=["p"],
        storage_options=azurite.deltalake_options,
    )
    return Storage(uri, azurite.options)


@pytest.fixture(scope="module")
def profiles(
    s3_storage: Storage, azure_storage: Storage, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Path]:
    storages = {"s3": s3_storage, "azure": azure_storage}

    def lines(request: Request, delta_format: bool) -> list[dict[str, Any]]:
        storage = storages[request.path_params["cloud"]]
        actions = _actions(storage)
        files = [resolve_log_path(storage.root, a["add"]["path"]) for a in actions if "add" in a]
        urls = storage.sign(files, timedelta(minutes=10))
        return sharing_query_lines(actions, urls, delta_format)

    directory = tmp_path_factory.mktemp("cloud-profiles")
    with serve_asgi(Starlette(routes=[sharing_query_route("/{cloud}", lines)])) as base:
        for cloud in storages:
            write_profile(directory, cloud, f"{base}/{cloud}")
        yield directory


@pytest.fixture(scope="module")
def results(official_client_python: Path, profiles: Path) -> dict[tuple[str, str], Any]:  # noqa: F811
    jobs = [(c, f) for c in ("s3", "azure") for f in ("parquet", "delta")]
    outputs = read_with_official_client(
        official_client_python, [(profiles / f"{c}.share", f) for c, f in jobs]
    )
    return dict(zip(jobs, outputs, strict=True))


@pytest.mark.parametrize("cloud", ["s3", "azure"])
@pytest.mark.parametrize("fmt", ["parquet", "delta"])
def test_official_client_reads_presigned_urls(results, cloud, fmt):
    assert results[cloud, fmt] == {"rows": ROWS}
