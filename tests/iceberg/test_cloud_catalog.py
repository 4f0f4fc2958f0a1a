"""The Iceberg REST catalog over a table in S3 (moto, with STS in server mode): its Iceberg
files are written under the table's own location, the load answer carries the credential
directory access vends (in ``config`` and ``storage-credentials``), pyiceberg and DuckDB
read the table with it alone, and the credential reaches neither the log nor the audit log.

moto enforces neither session policies nor signatures: that the readers were given no S3
settings of their own and still reach the emulator shows they used the answer's."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import obstore
import pytest
from iceberg_readers import deltalake_read, duckdb_arrow, duckdb_connection, first_difference
from obstore.store import S3Store
from pyiceberg.catalog.rest import RestCatalog

from catalog_lake import storage_entry, write_lake_table
from emulators import S3Emulator, assumed_roles
from sharing_server import TOKEN, RunningServer, start_server, stop_server, table_entry

BUCKET = "iceberg-cloud"
ROOT = f"s3://{BUCKET}/tables/sales"
URL_ONLY = f"s3://{BUCKET}/tables/url-only"
TABLE_PATH = "/v1/shares/Lake/namespaces/s/tables/sales"
CREDENTIAL_KEYS = {
    "s3.access-key-id",
    "s3.secret-access-key",
    "s3.session-token",
    "s3.session-token-expires-at-ms",
    "client.region",
    "s3.endpoint",
    "s3.path-style-access",
}


@pytest.fixture(scope="module")
def cloud_server(
    s3_emulator: S3Emulator, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningServer]:
    s3_emulator.create_bucket(BUCKET)
    for location in (ROOT, URL_ONLY):
        write_lake_table(s3_emulator, location)
    running = _start(s3_emulator, tmp_path_factory.mktemp("iceberg-cloud"))
    yield running
    stop_server(running)


def _start(s3: S3Emulator, tmp: Path) -> RunningServer:
    tables = [
        table_entry("sales", ROOT, accessModes=["url", "dir"], historyShared=True),
        table_entry("url_only", URL_ONLY, accessModes=["url"]),
    ]
    config: dict[str, Any] = {
        "version": 1,
        "authorization": {"bearerToken": "${DELTAPORT_TEST_TOKEN}"},
        "signingKey": "a-fixed-key-for-tests",
        "storage": [storage_entry(s3, BUCKET)],
        "audit": {"jsonLines": str(tmp / "audit.jsonl")},
        "iceberg": {"metadataDirectory": str(tmp / "metadata")},
        "shares": [{"name": "Lake", "schemas": [{"name": "s", "tables": tables}]}],
    }
    return start_server(config, tmp)


def _uri(server: RunningServer) -> str:
    return server.base + "/iceberg"


def _get(server: RunningServer, path: str) -> httpx.Response:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    return httpx.get(_uri(server) + path, headers=headers, timeout=60)


def test_load_answer_carries_the_vended_credential(
    cloud_server: RunningServer, s3_emulator: S3Emulator
) -> None:
    body = _get(cloud_server, TABLE_PATH).json()
    assert body["metadata"]["location"] == ROOT
    assert body["metadata-location"].startswith(ROOT + "/_deltaport_iceberg/metadata/")
    config = body["config"]
    assert set(config) == CREDENTIAL_KEYS
    assert config["s3.endpoint"] == s3_emulator.endpoint
    assert config["s3.path-style-access"] == "true"
    assert config["client.region"] == "us-east-1"
    # one credential, for the table's location, which holds its Iceberg files too
    assert body["storage-credentials"] == [{"prefix": ROOT, "config": config}]
    role = assumed_roles(ROOT)[-1]
    assert config["s3.access-key-id"] == role.access_key_id
    assert config["s3.session-token-expires-at-ms"] == str(int(role.expiration.timestamp() * 1000))
    # the Iceberg files are in the bucket, under the table's location
    store = S3Store(BUCKET, config=s3_emulator.options)  # type: ignore[arg-type]
    written = [m["path"] for batch in obstore.list(store, "tables/sales/") for m in batch]
    prefix = "tables/sales/_deltaport_iceberg/"
    assert any(p.startswith(prefix + "snap-") and p.endswith(".avro") for p in written)
    assert any(p.startswith(prefix + "data-") and p.endswith(".avro") for p in written)
    assert prefix + body["metadata-location"].split(prefix, 1)[1] in written


def test_credentials_route_gives_the_same_credential(cloud_server: RunningServer) -> None:
    loaded = _get(cloud_server, TABLE_PATH).json()
    renewed = _get(cloud_server, TABLE_PATH + "/credentials").json()
    assert renewed == {"storage-credentials": loaded["storage-credentials"]}


def test_pyiceberg_reads_with_the_vended_credential(
    cloud_server: RunningServer, s3_emulator: S3Emulator
) -> None:
    catalog = RestCatalog("deltaport", uri=_uri(cloud_server), token=TOKEN, warehouse="Lake")
    got = catalog.load_table("s.sales").scan().to_arrow()
    assert got.num_rows == 6
    assert first_difference(got, deltalake_read(ROOT, s3_emulator.deltalake_options)) is None


def test_duckdb_reads_with_the_vended_credential(
    cloud_server: RunningServer, s3_emulator: S3Emulator
) -> None:
    con = duckdb_connection()
    con.execute(f"CREATE SECRET deltaport (TYPE iceberg, TOKEN '{TOKEN}')")
    con.execute(
        f"ATTACH 'Lake' AS lake (TYPE iceberg, ENDPOINT '{_uri(cloud_server)}', SECRET deltaport)"
    )
    got = duckdb_arrow(con, "SELECT * FROM lake.s.sales")
    assert first_difference(got, deltalake_read(ROOT, s3_emulator.deltalake_options)) is None


def test_a_table_without_dir_mode_is_not_offered(cloud_server: RunningServer) -> None:
    listed = _get(cloud_server, "/v1/shares/Lake/namespaces/s/tables").json()
    assert listed["identifiers"] == [{"namespace": ["s"], "name": "sales"}]
    refused = _get(cloud_server, "/v1/shares/Lake/namespaces/s/tables/url_only")
    assert refused.status_code == 404
    assert refused.json()["error"]["type"] == "NoSuchTableException"
    credentials = _get(cloud_server, "/v1/shares/Lake/namespaces/s/tables/url_only/credentials")
    assert credentials.status_code == 404


def test_no_credential_in_the_log_or_the_audit_log(
    cloud_server: RunningServer, s3_emulator: S3Emulator, tmp_path: Path
) -> None:
    server = _start(s3_emulator, tmp_path)  # its own: the audit log is whole once it stops
    try:
        config = _get(server, TABLE_PATH).json()["config"]
        _get(server, TABLE_PATH + "/credentials")
    finally:
        stop_server(server)
    records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    assert [r["operation"] for r in records] == ["icebergLoadTable", "icebergLoadCredentials"]
    audit = (tmp_path / "audit.jsonl").read_text()
    log = server.log()
    assert "vended aws credentials to recipient default for table Lake.s.sales" in log
    for key in ("s3.secret-access-key", "s3.session-token", "s3.access-key-id"):
        assert config[key] not in log, key
        assert config[key] not in audit, key
