"""A real server reading S3 (moto), Azure (Azurite) and GCS (fake-gcs-server) through a
fault-injecting proxy.

Bursts of 5xx and reads that hang past the client timeout are retried by obstore within
the server's bounds; an outage that outlasts them is a clean 500 ``INTERNAL_ERROR`` (before
the answer starts, so never a 200 that looks complete) naming no storage detail, and the
server serves again as soon as storage is back. Slow reads and a data file deleted between
the listing and the download reach the Python client as the full table or a clear error.
(A failure after the answer started ends it with ``endStreamAction.errorMessage``:
tests/server/test_end_stream.py.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import obstore
import pyarrow as pa
import pytest
from deltalake import write_deltalake

from deltaport.client import SharingClient, SharingError
from deltaport.storage import Location, Storage
from emulators import AzuriteEmulator, GcsEmulator, S3Emulator
from sharing_server import TOKEN, RunningServer, ndjson, start_server, stop_server
from storage_faults import FaultyStorageProxy

ROWS = [{"id": i, "part": "a" if i % 2 else "b"} for i in range(40)]
TABLE = "/shares/s/schemas/sc/tables/t"
STORAGE_KEY_HINTS = ("127.0.0.1", "devstoreaccount1", "X-Amz", "X-Goog", "sig=")
# Each attempt gives up after 1 s, two retries within 4 s: an outage answers in seconds.
BOUNDS = {"timeout": "1s", "max_retries": "2", "retry_timeout": "4"}


@dataclass
class FaultyCloud:
    name: str
    location: str
    server: RunningServer
    proxy: FaultyStorageProxy
    storage: Storage  # the table, straight to the emulator
    put: Callable[[Location, bytes], None]  # an object written straight to the emulator

    def client(self) -> httpx.Client:
        return self.server.client()


def write_table(location: str, options: dict[str, str]) -> None:
    """One commit of two files (one a partition)."""
    write_deltalake(
        location, pa.Table.from_pylist(ROWS), partition_by=["part"], storage_options=options
    )


def serve(location: str, options: dict[str, str], tmp: Path) -> RunningServer:
    config = {
        "version": 1,
        "authorization": {"bearerToken": "${DELTAPORT_TEST_TOKEN}"},
        "signingKey": "storage-faults-key",
        "storage": [{"prefix": location, "options": {**options, **BOUNDS}}],
        "shares": [
            {
                "name": "s",
                "schemas": [{"name": "sc", "tables": [{"name": "t", "location": location}]}],
            }
        ],
    }
    return start_server(config, tmp)


@pytest.fixture(scope="module", params=["s3", "azure", "gcs"])
def cloud(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[FaultyCloud]:
    tmp = tmp_path_factory.mktemp(f"faults-{request.param}")
    if request.param == "gcs":
        gcs: GcsEmulator = request.getfixturevalue("gcs_emulator")
        gcs.create_bucket("faults")
        location, upstream, options = "gs://faults/t/", gcs.endpoint, gcs.options()
        write_table(str(tmp / "t"), {})
        gcs.upload_tree(tmp / "t", "faults", "t")
        proxy = FaultyStorageProxy(upstream)
        with proxy.running():
            server = serve(location, gcs.options(proxy.endpoint), tmp)
            try:
                storage = Storage(location, options)
                yield FaultyCloud(request.param, location, server, proxy, storage, _upload(gcs))
            finally:
                stop_server(server)
        return
    if request.param == "s3":
        s3: S3Emulator = request.getfixturevalue("s3_emulator")
        s3.create_bucket("faults")
        location, upstream, options = "s3://faults/t/", s3.endpoint, s3.options
        write_table(location, s3.deltalake_options)
        endpoint_key = "aws_endpoint"
    else:
        azure: AzuriteEmulator = request.getfixturevalue("azurite")
        azure.create_container("faults")
        location = "az://faults/t/"
        upstream, options = azure.endpoint, azure.options
        write_table(location, azure.deltalake_options)
        endpoint_key = "azure_endpoint"
    proxy = FaultyStorageProxy(upstream)
    with proxy.running():
        proxied = {**options, endpoint_key: upstream.replace(_origin(upstream), proxy.endpoint)}
        server = serve(location, proxied, tmp)
        try:
            storage = Storage(location, options)
            yield FaultyCloud(request.param, location, server, proxy, storage, _put(storage))
        finally:
            stop_server(server)


def _upload(gcs: GcsEmulator) -> Callable[[Location, bytes], None]:
    """fake-gcs-server takes uploads on its JSON API only."""

    def put(location: Location, data: bytes) -> None:
        gcs.upload(location.bucket, location.key, data)

    return put


def _put(storage: Storage) -> Callable[[Location, bytes], None]:
    def put(location: Location, data: bytes) -> None:
        obstore.put(storage.object_store(location), location.key, data)

    return put


def _origin(url: str) -> str:
    scheme, rest = url.split("://", 1)
    return f"{scheme}://{rest.split('/', 1)[0]}"


@pytest.fixture
def faulty(cloud: FaultyCloud) -> Iterator[FaultyCloud]:
    cloud.proxy.reset()
    yield cloud
    cloud.proxy.reset()


def profile(tmp_path: Path, server: RunningServer) -> dict[str, Any]:
    return {"shareCredentialsVersion": 1, "endpoint": server.url, "bearerToken": TOKEN}


def metadata(c: httpx.Client, **headers: str) -> httpx.Response:
    return c.get(f"{TABLE}/metadata", headers=headers)


def query(c: httpx.Client, **headers: str) -> httpx.Response:
    return c.post(f"{TABLE}/query", json={}, headers=headers)


@pytest.mark.parametrize("status", [500, 503])
def test_a_burst_of_5xx_is_retried(faulty: FaultyCloud, status: int) -> None:
    faulty.proxy.faults.statuses = [status] * 2
    with faulty.client() as c:
        answer = query(c)
    assert answer.status_code == 200, answer.text
    assert faulty.proxy.record.failed == 2
    assert faulty.proxy.faults.statuses == []
    assert len([line for line in ndjson(answer) if "file" in line]) == 2


def test_a_read_that_hangs_past_the_timeout_is_retried(faulty: FaultyCloud) -> None:
    faulty.proxy.faults.hangs = 1
    faulty.proxy.faults.hang_seconds = 3
    with faulty.client() as c:
        answer = metadata(c)
    assert answer.status_code == 200, answer.text
    assert faulty.proxy.record.hung == 1


@pytest.mark.parametrize("fault", ["5xx", "hang"])
def test_an_outage_is_a_clean_error_before_the_answer_then_recovers(
    faulty: FaultyCloud, fault: str
) -> None:
    if fault == "5xx":
        faulty.proxy.faults.statuses = [503] * 1000
    else:
        faulty.proxy.faults.hangs = 1000
        faulty.proxy.faults.hang_seconds = 2
    caps = {"delta-sharing-capabilities": "responseformat=delta;includeendstreamaction=true"}
    with faulty.client() as c:
        for answer in (metadata(c), query(c, **caps)):
            assert answer.status_code == 500, answer.text
            assert answer.json()["errorCode"] == "INTERNAL_ERROR"
            assert not any(hint in answer.text for hint in STORAGE_KEY_HINTS)
        record = faulty.proxy.record
        # each request tried 1 + max_retries times at most (obstore's default: 1 + 10)
        assert 2 < record.failed + record.hung <= 2 * 3
        faulty.proxy.reset()
        assert query(c, **caps).status_code == 200


def test_slow_reads_give_the_whole_table(faulty: FaultyCloud, tmp_path: Path) -> None:
    faulty.proxy.faults.slow_reads = 1000
    with SharingClient(profile(tmp_path, faulty.server)) as c:
        got = c.table("s.sc.t").snapshot().to_arrow()
    assert sorted(got.column("id").to_pylist()) == list(range(40))
    assert faulty.proxy.record.slowed > 2  # the log and both data files came slowly


@pytest.mark.parametrize("status", [500, 503])
def test_download_bursts_from_the_store_are_retried_by_the_client(
    faulty: FaultyCloud, tmp_path: Path, status: int
) -> None:
    faulty.proxy.faults.only = ".parquet"
    faulty.proxy.faults.statuses = [status] * 3
    with SharingClient(profile(tmp_path, faulty.server)) as c:
        got = c.table("s.sc.t").snapshot().to_arrow()
    assert sorted(got.column("id").to_pylist()) == list(range(40))
    assert faulty.proxy.record.failed == 3


def test_urls_refused_as_expired_by_the_store_are_asked_for_again(
    faulty: FaultyCloud, tmp_path: Path
) -> None:
    """The store refuses a pre-signed URL (403, as an expired one): the client asks the server
    for new URLs and reads the whole table."""
    faulty.proxy.faults.only = ".parquet"
    faulty.proxy.faults.statuses = [403]
    with SharingClient(profile(tmp_path, faulty.server)) as c:
        got = c.table("s.sc.t").snapshot().to_arrow()
    assert sorted(got.column("id").to_pylist()) == list(range(40))
    assert faulty.proxy.record.failed == 1


def test_a_file_deleted_before_its_download_is_a_clear_error(
    faulty: FaultyCloud, tmp_path: Path
) -> None:
    victim = faulty.storage.list_dir("part=a")[0].name
    location = faulty.storage.resolve(f"part=a/{victim}")
    kept = faulty.storage.read(location)
    obstore.delete(faulty.storage.object_store(location), location.key)
    try:
        with (
            SharingClient(profile(tmp_path, faulty.server)) as c,
            pytest.raises(SharingError) as info,
        ):
            c.table("s.sc.t").snapshot().to_arrow()
        assert info.value.status == 404
        assert "the file is gone" in str(info.value)
        assert "<?xml" not in str(info.value)
    finally:
        faulty.put(location, kept)
