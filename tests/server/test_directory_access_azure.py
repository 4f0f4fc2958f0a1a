"""Directory access on Azure against a real server process and Azurite.

Azurite (3.35) checks service SAS for containers and blobs but ignores directory SAS
(``sr=d``): it refuses the vended token everywhere, so it cannot prove that the token reads
inside the directory. The test asserts what the server vends (fields and signature over the
documented string-to-sign) and that Azurite refuses it outside the directory; the
string-to-sign is asserted for more paths in tests/storage/test_credential_documents.py.
"""

from __future__ import annotations

import base64
import hmac
from collections.abc import Iterator
from datetime import UTC, datetime
from urllib.parse import parse_qs

import httpx
import pyarrow as pa
import pytest
from deltalake import write_deltalake

from emulators import AzuriteEmulator
from sharing_server import RunningServer, ndjson, start_server, stop_server

TABLE = "/shares/s/schemas/sc/tables/t"


@pytest.fixture(scope="module")
def server(
    azurite: AzuriteEmulator, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RunningServer]:
    azurite.create_container("dirmode")
    for name in ("tables/sales", "tables/salesX"):
        write_deltalake(
            f"az://dirmode/{name}",
            pa.table({"id": [1, 2]}),
            storage_options=azurite.deltalake_options,
        )
    table = {
        "name": "t",
        "location": "az://dirmode/tables/sales",
        "accessModes": ["url", "dir"],
        "historyShared": True,
    }
    config = {
        "version": 1,
        "authorization": {"bearerToken": "${DELTAPORT_TEST_TOKEN}"},
        "storage": [{"prefix": "az://dirmode/", "options": azurite.options}],
        "shares": [{"name": "s", "schemas": [{"name": "sc", "tables": [table]}]}],
    }
    running = start_server(config, tmp_path_factory.mktemp("azure-dir-server"))
    yield running
    stop_server(running)


def test_vended_directory_sas(server: RunningServer, azurite: AzuriteEmulator) -> None:
    with server.client() as client:
        meta = ndjson(client.get(f"{TABLE}/metadata"))[1]["metaData"]
        assert meta["accessModes"] == ["url", "dir"]
        assert meta["location"] == "az://dirmode/tables/sales"
        response = client.post(f"{TABLE}/temporary-table-credentials")
    assert response.status_code == 200, response.text
    credentials = response.json()["credentials"]
    assert set(credentials) == {"location", "azureUserDelegationSas", "expirationTime", "endpoint"}
    assert credentials["endpoint"] == azurite.endpoint  # not Azure's own: recipients are told
    token = credentials["azureUserDelegationSas"]["sasToken"]
    query = {k: v[0] for k, v in parse_qs(token).items()}
    assert {k: query[k] for k in ("sr", "sdd", "sp", "sv")} == {
        "sr": "d",
        "sdd": "2",
        "sp": "rl",
        "sv": "2022-11-02",
    }
    assert "spr" not in query  # the emulator is reached over http
    expiry = datetime.fromtimestamp(credentials["expirationTime"] / 1000, UTC)
    assert query["se"] == expiry.strftime("%Y-%m-%dT%H:%M:%SZ")
    resource = f"/blob/{azurite.account}/dirmode/tables/sales"
    to_sign = "\n".join(["rl", "", query["se"], resource, "", "", "", "2022-11-02", "d", *[""] * 7])
    key = base64.b64decode(azurite.key)
    signature = base64.b64encode(hmac.digest(key, to_sign.encode(), "sha256")).decode()
    assert query["sig"] == signature
    base = f"{azurite.endpoint}/dirmode"
    outside = httpx.get(f"{base}/tables/salesX/_delta_log/00000000000000000000.json?{token}")
    assert outside.status_code == 403
    listing = httpx.get(f"{base}?restype=container&comp=list&{token}")
    assert listing.status_code == 403
    # Azurite cannot check sr=d: it refuses inside the directory too (if this starts to
    # pass, Azurite has learnt directory SAS: assert 200 here instead)
    inside = httpx.get(f"{base}/tables/sales/_delta_log/00000000000000000000.json?{token}")
    assert inside.status_code == 403
