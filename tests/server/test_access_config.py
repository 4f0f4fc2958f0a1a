"""accessModes, auxiliaryLocations and credential settings in the configuration."""

from __future__ import annotations

from typing import Any

import pytest

from deltaport.config.loading import parse_config
from deltaport.config.model import ConfigError

WHERE = "shares[0].schemas[0].tables[0]"
ROLE = {"awsRoleArn": "arn:aws:iam::123456789012:role/reader"}


def config(table: dict[str, Any], storage: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    entry = {"name": "t", "location": "s3://bkt/tables/t", "historyShared": True, **table}
    raw: dict[str, Any] = {
        "shares": [{"name": "s", "schemas": [{"name": "sc", "tables": [entry]}]}]
    }
    if storage is not None:
        raw["storage"] = storage
    return raw


def error_of(raw: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as info:
        parse_config(raw, {})
    return str(info.value)


def test_default_is_url_and_dir_needs_settings() -> None:
    parsed = parse_config(config({}), {})
    assert parsed.shares[0].schemas[0].tables[0].access_modes == ["url"]
    storage = [{"prefix": "s3://bkt/", "credentials": ROLE}]
    parsed = parse_config(config({"accessModes": ["url", "dir"]}, storage), {})
    assert parsed.storage[0].credentials is not None
    assert parsed.storage[0].credentials.duration_seconds == 3600


@pytest.mark.parametrize(
    ("table", "storage", "message"),
    [
        ({"accessModes": []}, None, f"{WHERE}.accessModes: must name at least one"),
        ({"accessModes": ["url", "ftp"]}, None, f"{WHERE}.accessModes: 'ftp' is not"),
        ({"accessModes": ["dir", "dir"]}, None, f"{WHERE}.accessModes: a mode is listed twice"),
        (
            {"accessModes": ["dir"], "location": "/data/t"},
            None,
            f"{WHERE}.location: 'dir' cannot be offered for a table on local disk",
        ),
        (
            {"accessModes": ["dir"], "historyShared": False},
            [{"prefix": "s3://bkt/", "credentials": ROLE}],
            f"{WHERE}.accessModes: 'dir' gives recipients the table's whole directory",
        ),
        (
            {"accessModes": ["dir"], "startVersion": 3},
            [{"prefix": "s3://bkt/", "credentials": ROLE}],
            f"{WHERE}.accessModes: 'dir' gives",
        ),
        ({"accessModes": ["dir"]}, None, f"{WHERE}.location: 'dir' on S3 needs credentials."),
        (
            {"accessModes": ["url", "dir"], "partitionFilter": "p = CURRENT_RECIPIENT('p')"},
            [{"prefix": "s3://bkt/", "credentials": ROLE}],
            f"{WHERE}.accessModes: 'dir' cannot be offered on a table with a partitionFilter: "
            "the credentials would reach every partition",
        ),
        (
            {"accessModes": ["dir"], "auxiliaryLocations": ["/tmp/aux"]},
            [{"prefix": "s3://bkt/", "credentials": ROLE}],
            f"{WHERE}.auxiliaryLocations[0]: 'dir' cannot be offered for a table on local disk",
        ),
        (
            {"accessModes": ["dir"], "location": "s3://bkt/" + "x/" * 900},
            [{"prefix": "s3://bkt/", "credentials": ROLE}],
            f"{WHERE}.location: the S3 session policy for s3://bkt/x/",
        ),
        (
            {"accessModes": ["dir"]},
            [{"prefix": "s3://bkt/", "credentials": {**ROLE, "durationSeconds": 60}}],
            f"{WHERE}.location: credentials durationSeconds must be between 900 and 43200",
        ),
        (
            {"accessModes": ["dir"], "location": "az://cont/t"},
            [{"prefix": "az://", "options": {"azure_storage_account_name": "acct"}}],
            f"{WHERE}.location: 'dir' on Azure: set an account key",
        ),
        ({"auxiliaryLocations": ["ftp://x/y"]}, None, f"{WHERE}.auxiliaryLocations[0]: "),
        (
            {},
            [{"prefix": "s3://", "credentials": {"awsRoleArm": "x"}}],
            "storage[0].credentials.awsRoleArm: unknown key",
        ),
    ],
)
def test_errors_name_the_path(
    table: dict[str, Any], storage: list[dict[str, Any]] | None, message: str
) -> None:
    assert error_of(config(table, storage)).startswith(message)


def test_the_longest_prefix_with_credentials_applies() -> None:
    storage = [
        {"prefix": "s3://bkt/", "credentials": ROLE},
        {"prefix": "s3://bkt/tables/", "options": {"aws_region": "eu-west-1"}},
        {"prefix": "s3://other/", "credentials": {"awsRoleArn": ""}},
    ]
    parse_config(config({"accessModes": ["dir"]}, storage), {})
    storage[0]["credentials"] = {"awsExternalId": "x"}  # no role any more
    assert "awsRoleArn" in error_of(config({"accessModes": ["dir"]}, storage))
