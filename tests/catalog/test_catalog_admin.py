"""The catalog commands against a running server (``--server URL``), through the admin
API's catalog routes, and what a recipient can do with the profile they make."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pyarrow as pa
import pytest
from deltalake import write_deltalake

from admin_support import start_with_admin
from deltaport.admin.openapi import catalog_bodies
from deltaport.admin.openapi.document import admin_openapi
from deltaport.cli import main as cli
from deltaport.protocol.credentials import ACCESS_MODES
from sharing_server import RunningServer, stop_server
from waiting import wait_until

ADMIN_TOKEN = "catalog-admin-token-7c1e"


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningServer, str, Path]]:
    tmp = tmp_path_factory.mktemp("catalog-admin")
    table = tmp / "t"
    write_deltalake(
        str(table),
        pa.table({"id": [1, 2, 3], "region": ["eu", "us", "eu"]}),
        partition_by=["region"],
    )
    assert cli(["catalog", "init", "--catalog", f"sqlite:///{tmp}/catalog.db"]) == 0
    config = {"catalog": f"sqlite:///{tmp}/catalog.db", "signingKey": "catalog-admin-key"}
    running = start_with_admin(config, tmp / "server", ADMIN_TOKEN)
    yield running.sharing, running.admin, table
    stop_server(running.sharing)


def _remote(admin: str, *args: str) -> int:
    return cli([*args, "--server", admin, "--admin-token", ADMIN_TOKEN])


def test_the_commands_work_against_a_running_server(setup, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    server, admin, table = setup
    assert _remote(admin, "share", "create", "sales") == 0
    filter_ = "region = CURRENT_RECIPIENT('region')"
    assert (
        _remote(admin, "table", "add", "sales.eu.t", str(table), "--partition-filter", filter_) == 0
    )
    profile = tmp_path / "acme.share"
    args = ["recipient", "create", "acme", "--property", "region=eu", "-o", str(profile)]
    assert _remote(admin, *args) == 0
    written = json.loads(profile.read_text())
    assert written["endpoint"] == server.url  # the server says where recipients reach it
    assert _remote(admin, "share", "grant", "sales", "--to", "acme") == 0
    capsys.readouterr()
    assert _remote(admin, "share", "list") == 0
    assert _remote(admin, "recipient", "list") == 0
    listed = capsys.readouterr().out
    assert "granted to acme" in listed and "acme: shares sales" in listed
    assert written["bearerToken"] not in listed

    with server.client(written["bearerToken"]) as client:
        wait_until(lambda: client.get("/shares").json().get("items"), 5, "the grant")
        answer = client.post("/shares/sales/schemas/eu/tables/t/query", json={})
        regions = {
            json.loads(line)["file"]["partitionValues"]["region"]
            for line in answer.text.splitlines()
            if '"file"' in line
        }
        assert regions == {"eu"}
        assert _remote(admin, "recipient", "revoke", "acme") == 0
        wait_until(lambda: client.get("/shares").status_code == 401, 5, "the revocation")


def test_errors_and_tokens(setup, capsys) -> None:  # type: ignore[no-untyped-def]
    server, admin, table = setup
    assert _remote(admin, "share", "create", "dup") == 0
    capsys.readouterr()
    assert _remote(admin, "share", "create", "dup") == 1
    assert "exists already" in capsys.readouterr().err
    assert _remote(admin, "share", "grant", "dup", "--to", "ghost") == 1
    assert "no recipient 'ghost'" in capsys.readouterr().err
    assert _remote(admin, "table", "add", "dup.s.t", str(table) + "-missing") == 1
    assert "cannot be shared" in capsys.readouterr().err
    refused = cli(["share", "list", "--server", admin, "--admin-token", "wrong-token"])
    assert refused == 1
    assert "401" in capsys.readouterr().err
    conflict = httpx.post(
        admin + "/api/shares",
        json={"name": "dup"},
        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
    )
    assert conflict.status_code == 409
    assert conflict.json()["errorCode"] == "RESOURCE_ALREADY_EXISTS"
    # a recipient's token does not open the admin API
    created = httpx.post(
        admin + "/api/recipients",
        json={"name": "someone"},
        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
    ).json()
    token = created["profile"]["bearerToken"]
    assert (
        httpx.get(admin + "/api/catalog", headers={"Authorization": f"Bearer {token}"}).status_code
        == 401
    )
    # and the admin API is not on the sharing listener
    assert httpx.get(server.base + "/api/catalog").status_code == 404


def _api(admin: str, method: str, path: str, body: object = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    return httpx.request(method, admin + path, json=body, headers=headers)


@pytest.mark.parametrize(
    ("fields", "code", "message"),
    [
        ({"accessModes": ["url", "dir"]}, "INVALID_PARAMETER_VALUE", "location: 'dir' cannot be"),
        ({"accessModes": ["ftp"]}, "INVALID_PARAMETER_VALUE", "accessModes: 'ftp' is not"),
        ({"accessModes": ["dir", "dir"]}, "INVALID_PARAMETER_VALUE", "accessModes: a mode is"),
        ({"accessModes": []}, "INVALID_PARAMETER_VALUE", "accessModes: must name at least one"),
        (
            {"accessModes": ["dir"], "historyShared": False},
            "INVALID_PARAMETER_VALUE",
            "accessModes: 'dir' gives recipients the table's whole directory",
        ),
        (
            {"accessModes": ["dir"], "startVersion": 1},
            "INVALID_PARAMETER_VALUE",
            "accessModes: 'dir' gives recipients",
        ),
        (
            {"accessModes": ["dir"], "partitionFilter": "region = 'eu'"},
            "INVALID_PARAMETER_VALUE",
            "accessModes: 'dir' cannot be offered on a table with a partitionFilter: the "
            "credentials would reach every partition",
        ),
        (
            {"accessModes": ["dir"], "location": "s3://lake/t"},
            "INVALID_PARAMETER_VALUE",
            "location: 'dir' on S3 needs credentials.awsRoleArn in the matching storage entry",
        ),
        (
            {"auxiliaryLocations": ["ftp://x/y"]},
            "INVALID_PARAMETER_VALUE",
            "auxiliaryLocations[0]: ",
        ),
        ({"accessModes": "url,dir"}, "MALFORMED_REQUEST", "invalid request body"),
        ({"auxiliaryLocations": "s3://x/y"}, "MALFORMED_REQUEST", "invalid request body"),
    ],
)
def test_table_creation_refuses_bad_access_and_writes_nothing(  # type: ignore[no-untyped-def]
    setup, fields: dict[str, object], code: str, message: str
) -> None:
    _, admin, table = setup
    _api(admin, "POST", "/api/shares", {"name": "modes"})
    before = _api(admin, "GET", "/api/catalog").json()
    body = {"name": "modes.s.t", "location": str(table), "historyShared": True, **fields}
    response = _api(admin, "POST", "/api/tables", body)
    assert response.status_code == 400, response.text
    assert response.json()["errorCode"] == code
    assert message in response.json()["message"]
    if code == "INVALID_PARAMETER_VALUE":
        assert response.json()["message"].startswith("table modes.s.t cannot be shared: ")
    after = _api(admin, "GET", "/api/catalog").json()
    assert after["tables"] == before["tables"] and after["generation"] == before["generation"]


def test_tables_show_their_access_modes(setup) -> None:  # type: ignore[no-untyped-def]
    _, admin, table = setup
    _api(admin, "POST", "/api/shares", {"name": "shown"})
    body = {"name": "shown.s.t", "location": str(table), "accessModes": ["url"]}
    assert _api(admin, "POST", "/api/tables", body).status_code == 201
    tables = {t["name"]: t for t in _api(admin, "GET", "/api/catalog").json()["tables"]}
    assert tables["shown.s.t"]["accessModes"] == ["url"]
    assert tables["shown.s.t"]["auxiliaryLocations"] == []


def _request_schema(operation: dict[str, Any], document: dict[str, Any]) -> dict[str, Any]:
    schema: dict[str, Any] = operation["requestBody"]["content"]["application/json"]["schema"]
    name = schema["$ref"].rsplit("/", 1)[1]
    found: dict[str, Any] = document["components"]["schemas"][name]
    return found


def test_the_openapi_document_describes_the_table_body_the_api_reads() -> None:
    document = admin_openapi()
    schema = _request_schema(document["paths"]["/api/tables"]["post"], document)
    accepted = {field.encode_name for field in msgspec.structs.fields(catalog_bodies.NewTable)}
    assert set(schema["properties"]) == accepted
    assert schema["properties"]["accessModes"]["items"]["enum"] == list(ACCESS_MODES)


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("/api/recipients", catalog_bodies.NewRecipient),
        ("/api/recipients/{recipient}/rotate", catalog_bodies.Rotation),
        ("/api/recipients/{recipient}/ip-access-list", catalog_bodies.IpAccessListChange),
    ],
)
def test_the_openapi_document_describes_the_recipient_bodies(path: str, kind: type) -> None:
    document = admin_openapi()
    operations = document["paths"][path]
    schema = _request_schema(operations.get("post") or operations["put"], document)
    assert set(schema["properties"]) == {f.encode_name for f in msgspec.structs.fields(kind)}


def test_a_rotation_through_the_server_keeps_the_endpoint_and_lifetime(  # type: ignore[no-untyped-def]
    setup, tmp_path: Path
) -> None:
    _, admin, _ = setup
    created = _api(
        admin,
        "POST",
        "/api/recipients",
        {"name": "rotor", "expiresInSeconds": 7 * 86400, "endpoint": "https://partner.example/ds"},
    )
    assert created.status_code == 201, created.text
    assert created.json()["profile"]["endpoint"] == "https://partner.example/ds"
    before = time.time()
    profile = tmp_path / "rotor.share"
    assert _remote(admin, "recipient", "rotate", "rotor", "--now", "-o", str(profile)) == 0
    written = json.loads(profile.read_text())
    assert written["endpoint"] == "https://partner.example/ds"
    expires = datetime.fromisoformat(written["expirationTime"].replace("Z", "+00:00")).timestamp()
    assert before + 7 * 86400 - 1 <= expires <= time.time() + 7 * 86400
    # null: no expiry from now on; an endpoint no profile could use is refused, nothing written
    assert (
        "expirationTime"
        not in _api(
            admin, "POST", "/api/recipients/rotor/rotate", {"expiresInSeconds": None}
        ).json()["profile"]
    )
    refused = _api(admin, "POST", "/api/recipients/rotor/rotate", {"endpoint": "file:///x"})
    assert refused.status_code == 400
    assert refused.json()["errorCode"] == "INVALID_PARAMETER_VALUE"
    catalog = _api(admin, "GET", "/api/catalog").json()
    (rotor,) = [r for r in catalog["recipients"] if r["name"] == "rotor"]
    assert (rotor["endpoint"], rotor["tokenLifetimeSeconds"]) == (
        "https://partner.example/ds",
        None,
    )
    assert len(rotor["tokens"]) == 3


def test_the_admin_token_is_read_from_a_file(  # type: ignore[no-untyped-def]
    setup, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    _, admin, _ = setup
    monkeypatch.delenv("DELTAPORT_ADMIN_TOKEN", raising=False)
    token_file = tmp_path / "admin-token"
    token_file.write_text(ADMIN_TOKEN + "\n")
    assert cli(["share", "list", "--server", admin, "--admin-token-file", str(token_file)]) == 0
    monkeypatch.setenv("DELTAPORT_ADMIN_TOKEN_FILE", str(token_file))
    assert cli(["share", "list", "--server", admin]) == 0
    monkeypatch.setenv("DELTAPORT_ADMIN_TOKEN_FILE", str(tmp_path / "missing"))
    assert cli(["share", "list", "--server", admin]) == 1
    assert "cannot read the admin token file" in capsys.readouterr().err


def test_ip_access_lists_through_the_api_and_the_commands(setup) -> None:  # type: ignore[no-untyped-def]
    _, admin, _ = setup
    created = _api(
        admin, "POST", "/api/recipients", {"name": "walled", "ipAccessList": ["10.0.0.0/8"]}
    )
    assert created.status_code == 201, created.text
    bad = _api(admin, "POST", "/api/recipients", {"name": "w2", "ipAccessList": ["10.1.2.3/8"]})
    assert bad.status_code == 400
    assert bad.json()["errorCode"] == "INVALID_PARAMETER_VALUE"
    assert "host bits" in bad.json()["message"]
    path = "/api/recipients/walled/ip-access-list"
    changed = _api(admin, "PUT", path, {"ipAccessList": ["2001:DB8::/32", "192.0.2.1"]})
    assert changed.json() == {"ipAccessList": ["2001:db8::/32", "192.0.2.1"]}
    assert (
        _api(
            admin, "PUT", "/api/recipients/nobody/ip-access-list", {"ipAccessList": []}
        ).status_code
        == 404
    )
    assert _api(admin, "PUT", path, {"ips": []}).status_code == 400
    assert _remote(admin, "recipient", "set-ip", "walled", "--ip", "::1") == 0
    catalog = _api(admin, "GET", "/api/catalog").json()
    (walled,) = [r for r in catalog["recipients"] if r["name"] == "walled"]
    assert walled["ipAccessList"] == ["::1"]
    assert not [r for r in catalog["recipients"] if r["name"] == "w2"]


def test_oauth_recipients_through_the_api(setup) -> None:  # type: ignore[no-untyped-def]
    _, admin, _ = setup
    body = {"name": "oauthy", "authenticationType": "OAUTH_CLIENT_CREDENTIALS"}
    created = _api(admin, "POST", "/api/recipients", body)
    assert created.status_code == 201, created.text
    profile = created.json()["profile"]
    assert (profile["shareCredentialsVersion"], profile["type"]) == (2, "oauth_client_credentials")
    assert profile["tokenEndpoint"] == profile["endpoint"] + "/oauth/token"
    rotated = _api(admin, "POST", "/api/recipients/oauthy/rotate", {"graceSeconds": 0})
    assert rotated.json()["profile"]["clientId"] != profile["clientId"]
    bogus = _api(admin, "POST", "/api/recipients", {"name": "b", "authenticationType": "BOGUS"})
    assert bogus.status_code == 400
    assert "authentication type" in bogus.json()["message"]
    catalog = _api(admin, "GET", "/api/catalog").json()
    (oauthy,) = [r for r in catalog["recipients"] if r["name"] == "oauthy"]
    assert oauthy["authenticationType"] == "OAUTH_CLIENT_CREDENTIALS"
    assert len(oauthy["oauthClients"]) == 2
    assert profile["clientSecret"] not in json.dumps(catalog)
