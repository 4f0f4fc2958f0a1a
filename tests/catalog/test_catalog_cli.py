"""The catalog commands: importing a YAML configuration, profile files, listings that never
show a token, and clear errors."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import httpx
import pytest
import yaml
from deltalake import write_deltalake

from deltaport.catalog.sql_store import SqlCatalog
from deltaport.cli import main as cli
from sharing_server import start_server, stop_server


@pytest.fixture
def table(tmp_path: Path) -> Path:
    import pyarrow as pa

    path = tmp_path / "t"
    write_deltalake(
        str(path),
        pa.table({"id": [1, 2, 3], "region": ["eu", "us", "eu"]}),
        partition_by=["region"],
    )
    return path


def test_import_keeps_the_yaml_token_working(table: Path, tmp_path: Path) -> None:
    config = {
        "authorization": {"bearerToken": "old-yaml-token"},
        "shares": [
            {
                "name": "s",
                "schemas": [
                    {
                        "name": "d",
                        "tables": [
                            {
                                "name": "t",
                                "location": str(table),
                                "historyShared": True,
                                "partitionFilter": "region = CURRENT_RECIPIENT('region')",
                            }
                        ],
                    }
                ],
            }
        ],
    }
    path = tmp_path / "server.yaml"
    path.write_text(yaml.safe_dump(config))
    url = f"sqlite:///{tmp_path}/catalog.db"
    assert cli(["catalog", "init", "--catalog", url]) == 0
    assert cli(["catalog", "import", str(path), "--catalog", url]) == 0
    contents = SqlCatalog(url).contents()
    assert [t.partition_filter for t in contents.tables] == ["region = CURRENT_RECIPIENT('region')"]
    assert contents.recipients["default"].shares == ("s",)
    server = start_server({"catalog": url}, tmp_path / "server")
    try:
        with httpx.Client(
            base_url=server.url, headers={"Authorization": "Bearer old-yaml-token"}
        ) as c:
            assert [s["name"] for s in c.get("/shares").json()["items"]] == ["s"]
            # the default recipient has no region property: the filtered table shows no file
            answer = c.post("/shares/s/schemas/d/tables/t/query", json={})
            assert answer.status_code == 200
            assert '"file"' not in answer.text
            credentials = c.post("/shares/s/schemas/d/tables/t/temporary-table-credentials")
            assert credentials.status_code == 400
            assert credentials.json()["errorCode"] == "UNSUPPORTED_ACCESS_MODE"
    finally:
        stop_server(server)


def test_profiles_are_private_and_tokens_never_listed(table: Path, tmp_path: Path, capsys) -> None:
    url = f"sqlite:///{tmp_path}/catalog.db"
    assert cli(["catalog", "init", "--catalog", url]) == 0
    profile = tmp_path / "acme.share"
    assert cli(["share", "create", "s", "--catalog", url]) == 0
    assert cli(["table", "add", "s.d.t", str(table), "--catalog", url]) == 0
    assert (
        cli(
            [
                "recipient",
                "create",
                "acme",
                "--expires",
                "90d",
                "--property",
                "region=eu",
                "-o",
                str(profile),
                "--endpoint",
                "https://x/delta-sharing",
                "--catalog",
                url,
            ]
        )
        == 0
    )
    written = json.loads(profile.read_text())
    assert written["shareCredentialsVersion"] == 1
    assert written["endpoint"] == "https://x/delta-sharing"
    assert written["expirationTime"].endswith("Z")
    assert stat.S_IMODE(profile.stat().st_mode) == 0o600
    capsys.readouterr()
    assert cli(["share", "grant", "s", "--to", "acme", "--catalog", url]) == 0
    assert cli(["recipient", "list", "--catalog", url]) == 0
    assert cli(["share", "list", "--catalog", url]) == 0
    printed = capsys.readouterr().out
    assert "acme: shares s; 1 token, expires " in printed
    assert "; new tokens last 90 days; properties region=eu" in printed
    assert "s  (1 table; granted to acme)" in printed
    assert written["bearerToken"] not in printed
    # the same profile file is never overwritten, and nothing changes when it would be
    before = SqlCatalog(url).contents().tokens
    assert cli(["recipient", "rotate", "acme", "-o", str(profile), "--catalog", url]) == 1
    assert "never overwritten" in capsys.readouterr().err
    assert SqlCatalog(url).contents().tokens == before


def test_errors_are_clear(table: Path, tmp_path: Path, capsys) -> None:
    url = f"sqlite:///{tmp_path}/catalog.db"
    assert cli(["catalog", "init", "--catalog", url]) == 0
    assert cli(["table", "add", "nope.d.t", str(table), "--catalog", url]) == 1
    assert "no share 'nope'" in capsys.readouterr().err
    assert cli(["share", "create", "s", "--catalog", url]) == 0
    assert cli(["table", "add", "s.d.t", str(tmp_path / "missing"), "--catalog", url]) == 1
    assert "cannot be shared" in capsys.readouterr().err
    bad_filter = ["table", "add", "s.d.t", str(table), "--partition-filter", "id = 1"]
    assert cli([*bad_filter, "--catalog", url]) == 1
    assert "not a partition column" in capsys.readouterr().err
    assert cli(["share", "grant", "s", "--to", "ghost", "--catalog", url]) == 1
    assert "no recipient 'ghost'" in capsys.readouterr().err
    assert cli(["share", "list", "--catalog", "mysql://x"]) == 1
    assert "sqlite:///PATH or postgresql://" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--access-modes", "url,dir", "--history"], "location: 'dir' cannot be offered for a"),
        (["--access-modes", "url,ftp"], "accessModes: 'ftp' is not an access mode"),
        (["--access-modes", "url,url"], "accessModes: a mode is listed twice"),
        (["--access-modes", ","], "accessModes: must name at least one"),
        (["--access-modes", "dir"], "accessModes: 'dir' gives recipients the table's whole"),
        (
            ["--access-modes", "dir", "--history", "--start-version", "1"],
            "accessModes: 'dir' gives recipients",
        ),
        (
            ["--access-modes", "dir", "--history", "--partition-filter", "region = 'eu'"],
            "accessModes: 'dir' cannot be offered on a table with a partitionFilter",
        ),
        (["--auxiliary-location", "ftp://x/y"], "auxiliaryLocations[0]: "),
    ],
)
def test_table_add_checks_access_modes_and_writes_nothing(
    table: Path, tmp_path: Path, capsys, args: list[str], message: str
) -> None:
    url = f"sqlite:///{tmp_path}/catalog.db"
    assert cli(["catalog", "init", "--catalog", url]) == 0
    assert cli(["share", "create", "s", "--catalog", url]) == 0
    capsys.readouterr()
    assert cli(["table", "add", "s.d.t", str(table), *args, "--catalog", url]) == 1
    assert f"error: table s.d.t cannot be shared: {message}" in capsys.readouterr().err
    assert SqlCatalog(url).contents().tables == ()


def test_table_add_with_a_config_checks_the_credential_settings(tmp_path: Path, capsys) -> None:
    """With --config the command knows the server's storage configuration: a dir location
    it has no credentials for is refused before the table is even read."""
    url = f"sqlite:///{tmp_path}/catalog.db"
    assert cli(["catalog", "init", "--catalog", url]) == 0
    config = tmp_path / "server.yaml"
    config.write_text(yaml.safe_dump({"storage": [{"prefix": "s3://lake/", "options": {}}]}))
    assert cli(["share", "create", "s", "--catalog", url]) == 0
    capsys.readouterr()
    add = ["table", "add", "s.d.t", "s3://lake/t", "--history", "--access-modes", "dir"]
    assert cli([*add, "--config", str(config), "--catalog", url]) == 1
    err = capsys.readouterr().err
    assert "location: 'dir' on S3 needs credentials.awsRoleArn in the matching storage" in err
    assert SqlCatalog(url).contents().tables == ()


def test_import_carries_access_modes_and_listings_show_them(
    table: Path, tmp_path: Path, capsys
) -> None:
    role = {"awsRoleArn": "arn:aws:iam::123456789012:role/reader"}
    lake = {
        "name": "lake",
        "location": "s3://lake/tables/t",
        "historyShared": True,
        "accessModes": ["url", "dir"],
        "auxiliaryLocations": ["s3://lake/aux/t"],
    }
    config = {
        "storage": [{"prefix": "s3://lake/", "credentials": role}],
        "shares": [
            {
                "name": "s",
                "schemas": [{"name": "d", "tables": [lake, {"name": "t", "location": str(table)}]}],
            }
        ],
    }
    path = tmp_path / "server.yaml"
    path.write_text(yaml.safe_dump(config))
    url = f"sqlite:///{tmp_path}/catalog.db"
    assert cli(["catalog", "init", "--catalog", url]) == 0
    assert cli(["catalog", "import", str(path), "--catalog", url]) == 0
    rows = {t.name: t for t in SqlCatalog(url).contents().tables}
    assert rows["lake"].access_modes == ("url", "dir")
    assert rows["lake"].auxiliary_locations == ("s3://lake/aux/t",)
    assert rows["t"].access_modes == ("url",) and rows["t"].auxiliary_locations == ()
    capsys.readouterr()
    assert cli(["share", "list", "--catalog", url]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert (
        "  s.d.lake -> s3://lake/tables/t  [history; access: url, dir; auxiliary: s3://lake/aux/t]"
        in listed
    )
    assert f"  s.d.t -> {table}" in listed


def test_listings_say_what_a_person_would(table: Path, tmp_path: Path, capsys) -> None:
    url = f"sqlite:///{tmp_path}/catalog.db"
    assert cli(["catalog", "init", "--catalog", url]) == 0
    for args in (
        ["share", "create", "empty"],
        ["share", "create", "one"],
        ["table", "add", "one.d.t", str(table)],
        ["recipient", "create", "acme", "-o", str(tmp_path / "acme.share")],
        ["recipient", "create", "beta", "--expires", "7d", "-o", str(tmp_path / "beta.share")],
        ["recipient", "create", "gone", "--expires", "36h", "-o", str(tmp_path / "gone.share")],
        ["recipient", "revoke", "gone"],
        ["share", "grant", "one", "--to", "acme"],
    ):
        assert cli([*args, "--catalog", url]) == 0
    printed = capsys.readouterr().out
    assert "wrote the profile of acme to" in printed and "(the token does not expire)" in printed
    assert "(the token expires 20" in printed and "never" not in printed
    assert cli(["share", "list", "--catalog", url]) == 0
    shares = capsys.readouterr().out.splitlines()
    assert shares[0] == "empty  (no tables; granted to nobody)"
    assert shares[1] == "one  (1 table; granted to acme)"
    assert cli(["recipient", "list", "--catalog", url]) == 0
    people = capsys.readouterr().out.splitlines()
    assert people[0] == "acme: shares one; 1 token, does not expire; new tokens do not expire"
    assert people[1].startswith("beta: no shares; 1 token, expires 20")
    assert people[1].endswith("; new tokens last 7 days")
    assert people[2] == "gone: no shares; no valid token; new tokens last 36 hours"
    config = tmp_path / "one.yaml"
    config.write_text(yaml.safe_dump({"shares": [{"name": "more", "schemas": []}]}))
    assert cli(["catalog", "import", str(config), "--catalog", url]) == 0
    assert capsys.readouterr().out.startswith(f"imported 1 share from {config}")
