"""Directory access for tables of a catalog database: a real ``deltaport serve --catalog``
process, moto (S3 and STS in server mode), and tables added with the catalog commands on the
database and through the admin API while the server runs.

As in tests/server/test_directory_access.py, moto enforces neither session policies nor
signatures: the scoping is asserted as the policy moto received, and the vended keys are
used to read the table's log.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import obstore
import pytest
from obstore.store import S3Store

from catalog_lake import ROLE, storage_entry, write_config, write_lake_table
from deltaport.cli import main as cli
from emulators import S3Emulator, assumed_roles
from sharing_server import RunningServer, free_port, ndjson, start_server, stop_server
from waiting import wait_until

BUCKET = "catalog-dir"
PLAIN = "catalog-plain"
"""A bucket the server reads but has no credential settings for."""
ROOT = f"s3://{BUCKET}/tables/sales"
ROOT_POLICY = """{"Version":"2012-10-17","Statement":[
    {"Sid":"ReadTableObjects","Effect":"Allow","Action":"s3:GetObject",
     "Resource":"arn:aws:s3:::catalog-dir/tables/sales/*"},
    {"Sid":"ListTableDirectory","Effect":"Allow","Action":"s3:ListBucket",
     "Resource":"arn:aws:s3:::catalog-dir",
     "Condition":{"StringLike":{"s3:prefix":["tables/sales","tables/sales/*"]}}}]}"""
"""The session policy AssumeRole must receive (AWS's "read objects in a folder" example)."""
AUX = f"s3://{BUCKET}/aux/sales"
LATE = f"s3://{BUCKET}/tables/late"
UNCONFIGURED = f"s3://{PLAIN}/tables/t"
SECRET = "catalog-dir-secret-5e0b7d"
ADMIN_TOKEN = "catalog-dir-admin-token-31f4"
TABLES = "/shares/s/schemas/sc/tables"
LIVE_SECONDS = 5


@dataclass
class Setup:
    server: RunningServer
    catalog: str
    admin: str
    tokens: dict[str, str]


def _cli(*args: str) -> None:
    assert cli(list(args)) == 0, args


def _token(catalog: str, tmp: Path, name: str) -> str:
    path = tmp / f"{name}.share"
    _cli(
        "recipient", "create", name, "-o", str(path), "--endpoint", "http://x", "--catalog", catalog
    )
    return str(json.loads(path.read_text())["bearerToken"])


@pytest.fixture(scope="module")
def setup(s3_emulator: S3Emulator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    tmp = tmp_path_factory.mktemp("catalog-dir")
    for bucket in (BUCKET, PLAIN):
        s3_emulator.create_bucket(bucket)
    for location in (ROOT, LATE, UNCONFIGURED):
        write_lake_table(s3_emulator, location)
    secret_options = {**s3_emulator.options, "aws_secret_access_key": SECRET}
    storage = [
        {**storage_entry(s3_emulator, BUCKET), "options": secret_options},
        {**storage_entry(s3_emulator, PLAIN, credentials=False), "options": secret_options},
    ]
    admin_port = free_port()
    config = {
        "signingKey": "catalog-dir-key",
        "storage": storage,
        "admin": {"port": admin_port, "tokens": [ADMIN_TOKEN]},
    }
    catalog = f"sqlite:///{tmp}/catalog.db"
    cli_config = str(write_config(tmp / "cli.yaml", {"storage": storage}))
    _cli("catalog", "init", "--catalog", catalog)
    _cli("share", "create", "s", "--catalog", catalog)
    _cli("share", "create", "other", "--catalog", catalog)
    on_db = ["--catalog", catalog, "--config", cli_config]
    dir_args = ["--history", "--access-modes", "url,dir", "--auxiliary-location", AUX]
    _cli("table", "add", "s.sc.lake", ROOT, *dir_args, *on_db)
    _cli("table", "add", "s.sc.dironly", ROOT, "--history", "--access-modes", "dir", *on_db)
    _cli("table", "add", "s.sc.urlonly", ROOT, *on_db)
    _cli("table", "add", "other.sc.lake", ROOT, "--history", "--access-modes", "dir", *on_db)
    tokens = {name: _token(catalog, tmp, name) for name in ("acme", "stranger")}
    _cli("share", "grant", "s", "--to", "acme", "--catalog", catalog)
    _cli("share", "grant", "other", "--to", "stranger", "--catalog", catalog)
    server = start_server(config, tmp / "server", catalog=catalog)
    try:
        yield Setup(server, catalog, f"http://127.0.0.1:{admin_port}", tokens)
    finally:
        stop_server(server)


@pytest.fixture
def acme(setup: Setup) -> Iterator[httpx.Client]:
    with setup.server.client(setup.tokens["acme"]) as client:
        yield client


def _vend(client: httpx.Client, table: str, body: dict[str, Any] | None = None) -> httpx.Response:
    return client.post(f"{TABLES}/{table}/temporary-table-credentials", json=body)


def _eventually(check: Callable[[], bool]) -> None:
    wait_until(check, LIVE_SECONDS, "the catalog's change to reach the server")


def test_listings_and_metadata_show_the_access(acme: httpx.Client) -> None:
    items = {t["name"]: t for t in acme.get(TABLES).json()["items"]}
    assert items["lake"]["accessModes"] == ["url", "dir"]
    assert items["lake"]["location"] == ROOT
    assert items["lake"]["auxiliaryLocations"] == [AUX]
    assert items["dironly"]["accessModes"] == ["dir"]
    assert items["urlonly"]["accessModes"] == ["url"]
    assert "auxiliaryLocations" not in items["urlonly"]
    everything = acme.get("/shares/s/all-tables").json()["items"]
    assert [t["accessModes"] for t in everything] == [t["accessModes"] for t in items.values()]
    for fmt in ("parquet", "delta"):
        for name, modes in (("lake", ["url", "dir"]), ("dironly", ["dir"])):
            response = acme.get(
                f"{TABLES}/{name}/metadata",
                headers={"delta-sharing-capabilities": f"responseformat={fmt}"},
            )
            assert response.status_code == 200, response.text
            meta = ndjson(response)[1]["metaData"]
            assert (meta["accessModes"], meta["location"]) == (modes, ROOT), (fmt, name)
            assert meta.get("auxiliaryLocations") == ([AUX] if name == "lake" else None)


def test_credentials_are_scoped_cached_per_location_and_read_the_table(
    setup: Setup, acme: httpx.Client, s3_emulator: S3Emulator
) -> None:
    response = _vend(acme, "lake")
    assert response.status_code == 200, response.text
    credentials = response.json()["credentials"]
    assert credentials["location"] == ROOT
    (role,) = assumed_roles(ROOT)
    assert role.role_arn == ROLE
    assert json.loads(role.policy) == json.loads(ROOT_POLICY)
    keys = credentials["awsTempCredentials"]
    assert keys["accessKeyId"] == role.access_key_id
    reader = S3Store(
        BUCKET,
        config={
            **{k: v for k, v in s3_emulator.options.items() if "secret" not in k},
            "aws_access_key_id": keys["accessKeyId"],
            "aws_secret_access_key": keys["secretAccessKey"],
            "aws_session_token": keys["sessionToken"],
        },
    )
    commit = obstore.get(reader, "tables/sales/_delta_log/00000000000000000000.json").bytes()
    assert b'"metaData"' in bytes(commit)
    # another table at the same location gets the same credential: one AssumeRole
    assert _vend(acme, "dironly").json()["credentials"] == credentials
    assert len(assumed_roles(ROOT)) == 1
    auxiliary = _vend(acme, "lake", {"location": AUX + "/"})
    assert auxiliary.status_code == 200, auxiliary.text
    assert auxiliary.json()["credentials"]["location"] == AUX
    (aux_role,) = assumed_roles(AUX)
    assert json.loads(aux_role.policy)["Statement"][0]["Resource"] == (
        f"arn:aws:s3:::{BUCKET}/aux/sales/*"
    )
    log = setup.server.log()
    assert f"vended aws credentials to recipient acme for table s.sc.lake at {ROOT}" in log
    assert keys["secretAccessKey"] not in log and keys["sessionToken"] not in log
    assert SECRET not in log


def test_modes_and_locations_are_enforced(acme: httpx.Client) -> None:
    for response in (
        acme.post(f"{TABLES}/dironly/query", json={}),
        acme.get(f"{TABLES}/dironly/changes", params={"startingVersion": 0}),
        _vend(acme, "urlonly"),
    ):
        assert response.status_code == 400
        assert response.json()["errorCode"] == "UNSUPPORTED_ACCESS_MODE"
    assert acme.post(f"{TABLES}/lake/query", json={}).status_code == 200
    for location in (f"s3://{BUCKET}/tables", f"{ROOT}/region=eu", UNCONFIGURED):
        response = _vend(acme, "lake", {"location": location})
        assert response.status_code == 400, location
        assert response.json()["errorCode"] == "INVALID_PARAMETER_VALUE"


def test_only_granted_recipients_get_credentials(setup: Setup) -> None:
    with setup.server.client(setup.tokens["stranger"]) as stranger:
        for table in ("lake", "dironly", "nope"):
            response = _vend(stranger, table)
            assert response.status_code == 404, table
            assert response.json()["errorCode"] == "RESOURCE_DOES_NOT_EXIST"
        granted = stranger.post("/shares/other/schemas/sc/tables/lake/temporary-table-credentials")
        assert granted.status_code == 200, granted.text
    with setup.server.client("dpt_not-a-token") as nobody:
        assert _vend(nobody, "lake").status_code == 401


def test_a_table_added_through_the_admin_api_while_running(
    setup: Setup, acme: httpx.Client
) -> None:
    remote = ["--server", setup.admin, "--admin-token", ADMIN_TOKEN]
    add = ["table", "add", "s.sc.late", LATE, "--history", "--access-modes", "dir"]
    assert cli([*add, *remote]) == 0
    _eventually(lambda: _vend(acme, "late").status_code == 200)
    assert _vend(acme, "late").json()["credentials"]["location"] == LATE
    assert len(assumed_roles(LATE)) == 1
    assert cli(["table", "remove", "s.sc.late", *remote]) == 0
    _eventually(lambda: _vend(acme, "late").status_code == 404)


def test_the_admin_api_refuses_dir_where_the_server_has_no_credentials(
    setup: Setup, capsys: pytest.CaptureFixture[str]
) -> None:
    headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    body = {
        "name": "s.sc.refused",
        "location": UNCONFIGURED,
        "historyShared": True,
        "accessModes": ["url", "dir"],
    }
    response = httpx.post(setup.admin + "/api/tables", json=body, headers=headers)
    assert response.status_code == 400
    assert response.json() == {
        "errorCode": "INVALID_PARAMETER_VALUE",
        "message": "table s.sc.refused cannot be shared: location: 'dir' on S3 needs "
        "credentials.awsRoleArn in the matching storage entry",
    }
    remote = ["--server", setup.admin, "--admin-token", ADMIN_TOKEN]
    add = ["table", "add", "s.sc.refused", UNCONFIGURED, "--history", "--access-modes", "dir"]
    assert cli([*add, *remote]) == 1
    assert "the server refused (400)" in capsys.readouterr().err
    tables = httpx.get(setup.admin + "/api/catalog", headers=headers).json()["tables"]
    assert "s.sc.refused" not in {t["name"] for t in tables}


def test_a_location_without_credentials_is_refused_when_asked(
    setup: Setup, acme: httpx.Client, s3_emulator: S3Emulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A command on the database without --config cannot know the server's credential
    settings (it reads the table with the provider's own AWS environment): the table is
    added, and its credentials are refused when asked for, saying why in the log."""
    for key, value in {
        "AWS_ENDPOINT_URL_S3": s3_emulator.endpoint,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": "us-east-1",
        "AWS_ALLOW_HTTP": "true",
    }.items():
        monkeypatch.setenv(key, value)
    add = ["table", "add", "s.sc.plain", UNCONFIGURED, "--history", "--access-modes", "url,dir"]
    _cli(*add, "--catalog", setup.catalog)
    _eventually(lambda: _vend(acme, "plain").status_code != 404)
    response = _vend(acme, "plain")
    assert response.status_code == 400
    assert response.json() == {
        "errorCode": "UNSUPPORTED_ACCESS_MODE",
        "message": "temporary credentials are not configured on this server for location "
        f"{UNCONFIGURED} of table s.sc.plain: ask the provider",
    }
    assert acme.post(f"{TABLES}/plain/query", json={}).status_code == 200
    log = setup.server.log()
    assert (
        f"temporary credentials for table s.sc.plain at {UNCONFIGURED} cannot be vended: "
        "'dir' on S3 needs credentials.awsRoleArn in the matching storage entry"
    ) in log
    assert SECRET not in log and SECRET not in response.text
    assert assumed_roles(UNCONFIGURED) == []
