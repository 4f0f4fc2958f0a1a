"""The Iceberg REST catalog over a table in Azure blob storage (Azurite): its Iceberg files
are written under the table's own location, the load answer carries the directory SAS
directory access vends and the blob endpoint, and pyiceberg reads the table with them
alone, at its latest and an earlier version.

Azurite refuses every directory SAS, so readers reach it through a gate that checks the
SAS as Azure does (tests/azure_directory_gate.py): every request the reader made carried
the vended SAS, and every blob it read lies in the table's directory."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import httpx
import pyarrow as pa
import pytest
from deltalake import write_deltalake
from iceberg_readers import deltalake_read, first_difference
from pyiceberg.catalog.rest import RestCatalog

from azure_directory_gate import DirectoryGate, directory_gate
from emulators import AzuriteEmulator
from sharing_server import TOKEN, RunningServer, start_server, stop_server, table_entry

CONTAINER = "icebergbox"
HOST = "devstoreaccount1.dfs.core.windows.net"
ROOT = f"abfss://{CONTAINER}@{HOST}/tables/sales"
TABLE_PATH = "/v1/shares/Lake/namespaces/s/tables/sales"
SAS_KEYS = {
    f"adls.sas-token.{HOST}",
    f"adls.sas-token-expires-at-ms.{HOST}",
    "adls.account-name",
    "adls.sas-token",
    "adls.connection-string",
}


@pytest.fixture(scope="module")
def gate(azurite: AzuriteEmulator) -> Iterator[DirectoryGate]:
    with directory_gate(azurite) as running:
        yield running


@pytest.fixture(scope="module")
def azure_server(
    azurite: AzuriteEmulator, gate: DirectoryGate, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningServer]:
    azurite.create_container(CONTAINER)
    for region in ("eu", "us"):  # versions 0 and 1
        rows = pa.table({"id": [1, 2, 3], "region": [region] * 3})
        write_deltalake(
            f"az://{CONTAINER}/tables/sales",
            rows,
            mode="append",
            storage_options=azurite.deltalake_options,
        )
    running = _start(azurite, gate, tmp_path_factory.mktemp("iceberg-azure"))
    yield running
    stop_server(running)


def _start(azurite: AzuriteEmulator, gate: DirectoryGate, tmp: Path) -> RunningServer:
    """The server writes to Azurite with the account key and tells readers the gate."""
    storage = {
        "prefix": f"abfss://{CONTAINER}@{HOST}/",
        "options": azurite.options,
        "credentials": {"durationSeconds": 900, "azureRecipientEndpoint": gate.endpoint},
    }
    table = table_entry("sales", ROOT, accessModes=["url", "dir"], historyShared=True)
    config: dict[str, Any] = {
        "version": 1,
        "authorization": {"bearerToken": "${DELTAPORT_TEST_TOKEN}"},
        "signingKey": "a-fixed-key-for-tests",
        "storage": [storage],
        "audit": {"jsonLines": str(tmp / "audit.jsonl")},
        "iceberg": {"metadataDirectory": str(tmp / "metadata")},
        "shares": [{"name": "Lake", "schemas": [{"name": "s", "tables": [table]}]}],
    }
    return start_server(config, tmp)


def _uri(server: RunningServer) -> str:
    return server.base + "/iceberg"


def _get(server: RunningServer, path: str) -> httpx.Response:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    return httpx.get(_uri(server) + path, headers=headers, timeout=60)


def test_load_answer_carries_the_directory_sas_and_the_endpoint(
    azure_server: RunningServer, gate: DirectoryGate
) -> None:
    body = _get(azure_server, TABLE_PATH).json()
    assert body["metadata"]["location"] == ROOT
    assert body["metadata-location"].startswith(ROOT + "/_deltaport_iceberg/metadata/")
    config = body["config"]
    assert set(config) == SAS_KEYS
    sas = config["adls.sas-token"]
    assert config[f"adls.sas-token.{HOST}"] == sas
    assert config["adls.account-name"] == "devstoreaccount1"
    assert config["adls.connection-string"] == (
        f"BlobEndpoint={gate.endpoint};SharedAccessSignature={sas}"
    )
    # read and list only, for the table's directory (tables/sales: depth 2)
    query = {k: v[0] for k, v in parse_qs(sas).items()}
    assert {k: query[k] for k in ("sr", "sdd", "sp")} == {"sr": "d", "sdd": "2", "sp": "rl"}
    assert body["storage-credentials"] == [{"prefix": ROOT, "config": config}]


def test_pyiceberg_reads_through_the_directory_sas(
    azure_server: RunningServer, azurite: AzuriteEmulator, gate: DirectoryGate
) -> None:
    catalog = RestCatalog("deltaport", uri=_uri(azure_server), token=TOKEN, warehouse="Lake")
    table = catalog.load_table("s.sales")
    gate.requests.clear()
    latest = table.scan().to_arrow()
    assert latest.num_rows == 6
    assert (
        first_difference(
            latest, deltalake_read(f"az://{CONTAINER}/tables/sales", azurite.deltalake_options)
        )
        is None
    )
    first = next(s for s in table.metadata.snapshots if s.summary["delta.version"] == "0")
    earlier = table.scan(snapshot_id=first.snapshot_id).to_arrow()
    assert earlier.num_rows == 3
    assert (
        first_difference(
            earlier, deltalake_read(f"az://{CONTAINER}/tables/sales", azurite.deltalake_options, 0)
        )
        is None
    )
    # every request passed the gate, inside the table's directory, Iceberg files included
    read = {r.blob for r in gate.requests}
    assert {r.status for r in gate.requests} <= {200, 206}, gate.requests
    assert all(blob.startswith(f"{CONTAINER}/tables/sales/") for blob in read)
    iceberg_files = {
        b for b in read if b.startswith(f"{CONTAINER}/tables/sales/_deltaport_iceberg/")
    }
    assert any(b.endswith(".avro") for b in iceberg_files)
    assert any(b.endswith(".parquet") for b in read)


def test_the_gate_refuses_what_azure_refuses(
    azure_server: RunningServer, azurite: AzuriteEmulator, gate: DirectoryGate
) -> None:
    """The gate is no open door: without the SAS, outside the directory, or writing."""
    sas = _get(azure_server, TABLE_PATH).json()["config"]["adls.sas-token"]
    base = f"{gate.endpoint}/{CONTAINER}"
    log = f"tables/sales/_delta_log/{0:020}.json"
    assert httpx.get(f"{base}/{log}?{sas}").status_code == 200
    assert httpx.get(f"{base}/{log}").status_code == 403
    assert httpx.get(f"{base}/other/{log}?{sas}").status_code == 403
    assert httpx.put(f"{base}/tables/sales/x.txt?{sas}", content=b"x").status_code == 403
    assert httpx.get(f"{base}?restype=container&comp=list&{sas}").status_code == 403


def test_no_sas_in_the_log_or_the_audit_log(
    azurite: AzuriteEmulator, gate: DirectoryGate, azure_server: RunningServer, tmp_path: Path
) -> None:
    server = _start(azurite, gate, tmp_path)  # its own: the audit log is whole once it stops
    try:
        config = _get(server, TABLE_PATH).json()["config"]
        _get(server, TABLE_PATH + "/credentials")
    finally:
        stop_server(server)
    audit = (tmp_path / "audit.jsonl").read_text()
    records = [json.loads(line) for line in audit.splitlines()]
    assert [r["operation"] for r in records] == ["icebergLoadTable", "icebergLoadCredentials"]
    log = server.log()
    assert "vended azure credentials to recipient default for table Lake.s.sales" in log
    signature = parse_qs(config["adls.sas-token"])["sig"][0]
    for text in (log, audit):
        assert signature not in text
        assert config["adls.sas-token"] not in text
