"""Directory access against a real server process and moto (S3 and STS in server mode).

moto answers AssumeRole and records the session policy it was given, but enforces neither
session policies nor signatures: the scoping is asserted as the exact policy moto received
(for paths with ``*``, ``?`` and ``$`` too), and the vended keys are used to read the table.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import obstore
import pyarrow as pa
import pytest
from deltalake import write_deltalake
from obstore.store import S3Store
from prometheus_client.parser import text_string_to_metric_families

from emulators import S3Emulator, assumed_roles, read_with_official_client, write_profile
from sharing_server import TOKEN, RunningServer, free_port, ndjson, start_server, stop_server

ACCOUNT = "123456789012"
ROLE = f"arn:aws:iam::{ACCOUNT}:role/table-reader"
ROOT = "s3://dirmode/tables/sales"
AUX = "s3://dirmode/aux/sales"
WILD = "s3://dirmode/odd/a*b?c$d"
TABLE = "/shares/s/schemas/sc/tables"
# The session policies AssumeRole must receive (AWS's "read objects in a folder" example;
# ``${*}``, ``${?}`` and ``${$}`` match the characters literally).
ROOT_POLICY = """{"Version":"2012-10-17","Statement":[
    {"Sid":"ReadTableObjects","Effect":"Allow","Action":"s3:GetObject",
     "Resource":"arn:aws:s3:::dirmode/tables/sales/*"},
    {"Sid":"ListTableDirectory","Effect":"Allow","Action":"s3:ListBucket",
     "Resource":"arn:aws:s3:::dirmode",
     "Condition":{"StringLike":{"s3:prefix":["tables/sales","tables/sales/*"]}}}]}"""
AUX_POLICY = """{"Version":"2012-10-17","Statement":[
    {"Sid":"ReadTableObjects","Effect":"Allow","Action":"s3:GetObject",
     "Resource":"arn:aws:s3:::dirmode/aux/sales/*"},
    {"Sid":"ListTableDirectory","Effect":"Allow","Action":"s3:ListBucket",
     "Resource":"arn:aws:s3:::dirmode",
     "Condition":{"StringLike":{"s3:prefix":["aux/sales","aux/sales/*"]}}}]}"""
WILD_POLICY = """{"Version":"2012-10-17","Statement":[
    {"Sid":"ReadTableObjects","Effect":"Allow","Action":"s3:GetObject",
     "Resource":"arn:aws:s3:::dirmode/odd/a${*}b${?}c${$}d/*"},
    {"Sid":"ListTableDirectory","Effect":"Allow","Action":"s3:ListBucket",
     "Resource":"arn:aws:s3:::dirmode",
     "Condition":{"StringLike":{"s3:prefix":["odd/a${*}b${?}c${$}d","odd/a${*}b${?}c${$}d/*"]}}}]}"""
ADMIN_TOKEN = "dir-admin-token-3e9a"
ROWS = [{"id": i, "p": "x" if i % 2 else "y"} for i in range(6)]


def table(name: str, location: str, modes: list[str], **extra: Any) -> dict[str, Any]:
    return {"name": name, "location": location, "accessModes": modes, **extra}


@pytest.fixture(scope="module")
def admin_port() -> int:
    """Chosen when the server starts, not at import: a port picked at collection time can
    be taken by another test's process before this module runs."""
    return free_port()


@pytest.fixture(scope="module")
def server(
    s3_emulator: S3Emulator, tmp_path_factory: pytest.TempPathFactory, admin_port: int
) -> Iterator[RunningServer]:
    s3_emulator.create_bucket("dirmode")
    write_deltalake(
        ROOT,
        pa.Table.from_pylist(ROWS),
        partition_by=["p"],
        storage_options=s3_emulator.deltalake_options,
    )
    dir_tables = [
        table("t", ROOT, ["url", "dir"], historyShared=True, auxiliaryLocations=[AUX]),
        table("dironly", ROOT, ["dir"], historyShared=True),
        table("urlonly", ROOT, ["url"]),
        table("wild", WILD, ["dir"], historyShared=True),
        table("burst", "s3://dirmode/burst/t", ["dir"], historyShared=True),
    ]
    config = {
        "version": 1,
        "authorization": {"bearerToken": "${DELTAPORT_TEST_TOKEN}"},
        "signingKey": "k",
        "admin": {"port": admin_port, "tokens": [ADMIN_TOKEN]},
        "storage": [
            {
                "prefix": "s3://dirmode/",
                "options": s3_emulator.options,
                "credentials": {
                    "awsRoleArn": ROLE,
                    "awsExternalId": "ext-42",
                    "durationSeconds": 900,
                },
            }
        ],
        "shares": [
            {"name": "s", "schemas": [{"name": "sc", "tables": dir_tables}]},
            {"name": "other", "schemas": []},
        ],
    }
    running = start_server(config, tmp_path_factory.mktemp("dir-server"))
    yield running
    stop_server(running)


@pytest.fixture
def client(server: RunningServer) -> Iterator[httpx.Client]:
    with server.client() as c:
        yield c


def assumed(location: str) -> list[Any]:
    return assumed_roles(location, ACCOUNT)


def vend(client: httpx.Client, name: str, body: dict[str, Any] | None = None) -> httpx.Response:
    return client.post(f"{TABLE}/{name}/temporary-table-credentials", json=body)


def test_listings_and_metadata_carry_access_fields(client: httpx.Client) -> None:
    items = {t["name"]: t for t in client.get(TABLE).json()["items"]}
    assert items["t"]["accessModes"] == ["url", "dir"]
    assert items["t"]["location"] == ROOT
    assert items["t"]["auxiliaryLocations"] == [AUX]
    assert items["dironly"]["accessModes"] == ["dir"]
    assert (
        items["urlonly"]["accessModes"] == ["url"] and "auxiliaryLocations" not in items["urlonly"]
    )
    all_tables = client.get("/shares/s/all-tables").json()["items"]
    assert [t["accessModes"] for t in all_tables] == [i["accessModes"] for i in items.values()]
    for fmt in ("parquet", "delta"):
        for name, modes in (("t", ["url", "dir"]), ("dironly", ["dir"])):
            response = client.get(
                f"{TABLE}/{name}/metadata",
                headers={"delta-sharing-capabilities": f"responseformat={fmt}"},
            )
            assert response.status_code == 200, response.text
            meta = ndjson(response)[1]["metaData"]
            assert meta["accessModes"] == modes, (fmt, name)
            assert meta["location"] == ROOT
            assert meta.get("auxiliaryLocations") == ([AUX] if name == "t" else None)
            assert ("deltaMetadata" in meta) == (fmt == "delta")


def test_modes_are_enforced(client: httpx.Client) -> None:
    for response in (
        client.post(f"{TABLE}/dironly/query", json={}),
        client.get(f"{TABLE}/dironly/changes", params={"startingVersion": 0}),
        vend(client, "urlonly"),
    ):
        assert response.status_code == 400
        assert response.json()["errorCode"] == "UNSUPPORTED_ACCESS_MODE"
    assert "directory access only" in client.post(f"{TABLE}/dironly/query").json()["message"]
    assert client.post(f"{TABLE}/t/query", json={}).status_code == 200


def test_vended_s3_credentials_are_scoped_and_work(
    client: httpx.Client, s3_emulator: S3Emulator
) -> None:
    response = vend(client, "t")
    assert response.status_code == 200, response.text
    credentials = response.json()["credentials"]
    assert set(credentials) == {
        "location",
        "awsTempCredentials",
        "expirationTime",
        "endpoint",
        "region",
    }
    assert credentials["location"] == ROOT
    # an S3-compatible store: the recipient is told where it is, and the bucket's region
    assert credentials["endpoint"] == s3_emulator.endpoint
    assert credentials["region"] == "us-east-1"
    keys = credentials["awsTempCredentials"]
    (role,) = assumed(ROOT)
    assert role.role_arn == ROLE and role.external_id == "ext-42"
    assert keys["accessKeyId"] == role.access_key_id
    assert credentials["expirationTime"] == int(role.expiration.timestamp() * 1000)
    assert json.loads(role.policy) == json.loads(ROOT_POLICY)
    store = S3Store(
        "dirmode",
        config={
            **{k: v for k, v in s3_emulator.options.items() if "secret" not in k},
            "aws_access_key_id": keys["accessKeyId"],
            "aws_secret_access_key": keys["secretAccessKey"],
            "aws_session_token": keys["sessionToken"],
        },
    )
    commit = obstore.get(store, "tables/sales/_delta_log/00000000000000000000.json").bytes()
    assert b'"metaData"' in bytes(commit)
    # asked again: the same credential from the cache, no second AssumeRole
    assert vend(client, "T").json()["credentials"] == credentials
    assert len(assumed(ROOT)) == 1


def vended_count(admin_port: int, table_name: str) -> float:
    """``deltaport_vended_credentials_total`` of ``default`` and ``table_name``."""
    answer = httpx.get(
        f"http://127.0.0.1:{admin_port}/metrics",
        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
    )
    assert answer.status_code == 200, answer.text
    return sum(
        sample.value
        for family in text_string_to_metric_families(answer.text)
        for sample in family.samples
        if sample.name == "deltaport_vended_credentials_total"
        and sample.labels == {"recipient": "default", "table": table_name}
    )


def test_vended_credentials_are_counted_by_recipient_and_table(
    client: httpx.Client, admin_port: int
) -> None:
    before = vended_count(admin_port, "s.sc.dironly")
    assert vend(client, "dironly").status_code == 200
    assert vend(client, "DirOnly").status_code == 200  # the catalog's spelling is the label
    assert vend(client, "urlonly").status_code == 400  # refused: not counted
    assert vend(client, "dironly").status_code == 200
    assert vended_count(admin_port, "s.sc.dironly") - before == 3
    assert vended_count(admin_port, "s.sc.urlonly") == 0


def test_auxiliary_and_foreign_locations(client: httpx.Client) -> None:
    response = vend(client, "t", {"location": AUX + "/"})
    assert response.status_code == 200, response.text
    assert response.json()["credentials"]["location"] == AUX
    (role,) = assumed(AUX)
    assert json.loads(role.policy) == json.loads(AUX_POLICY)
    for location in ("s3://dirmode/tables", "s3://dirmode/tables/sales/p=x", "gs://x/y", "::"):
        response = vend(client, "t", {"location": location})
        assert response.status_code == 400, location
        assert response.json()["errorCode"] == "INVALID_PARAMETER_VALUE"
    bad = client.post(f"{TABLE}/t/temporary-table-credentials", content=b"{nope")
    assert bad.json()["errorCode"] == "MALFORMED_REQUEST"


def test_wildcards_in_the_path_are_escaped(client: httpx.Client) -> None:
    assert vend(client, "wild").status_code == 200
    (role,) = assumed(WILD)
    assert json.loads(role.policy) == json.loads(WILD_POLICY)


def test_a_burst_makes_one_sts_call(server: RunningServer) -> None:
    def ask(_: int) -> dict[str, Any]:
        with server.client() as c:
            response = vend(c, "burst")
            assert response.status_code == 200
            return dict(response.json()["credentials"]["awsTempCredentials"])

    with ThreadPoolExecutor(12) as pool:
        answers = list(pool.map(ask, range(36)))
    assert len(assumed("s3://dirmode/burst/t")) == 1
    assert all(a == answers[0] for a in answers)


def test_unknown_or_ungranted_tables_and_logs(server: RunningServer, client: httpx.Client) -> None:
    for path in (
        "/shares/other/schemas/sc/tables/t",
        f"{TABLE}/nope",
        "/shares/x/schemas/y/tables/t",
    ):
        response = client.post(f"{path}/temporary-table-credentials")
        assert response.status_code == 404
        assert response.json()["errorCode"] == "RESOURCE_DOES_NOT_EXIST"
    with server.client(token="wrong") as stranger:
        assert vend(stranger, "t").status_code == 401
    secret = vend(client, "t").json()["credentials"]["awsTempCredentials"]
    log = server.log()
    assert f"vended aws credentials to recipient default for table s.sc.t at {ROOT}" in log
    assert secret["secretAccessKey"] not in log and secret["sessionToken"] not in log


def test_official_client_reads_a_url_and_dir_table(
    server: RunningServer, official_client_python: Path, tmp_path: Path
) -> None:
    profile = write_profile(tmp_path, "dir", server.url)
    profile.write_text(profile.read_text().replace('"token"', json.dumps(TOKEN)))
    results = read_with_official_client(
        official_client_python, [(profile, "parquet"), (profile, "delta")]
    )
    for result in results:
        assert "error" not in result, result.get("error")
        assert [r["id"] for r in result["rows"]] == [r["id"] for r in ROWS]
