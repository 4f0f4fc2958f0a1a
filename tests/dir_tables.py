"""Corpus tables copied into a bucket of the S3 emulator (moto) and served by a real
deltaport server with ``accessModes: [url, dir]`` and STS credentials: what the client and
Spark tests of directory mode read both ways.

``broken`` has an auxiliary location whose credentials cannot be issued (its STS endpoint
is a closed port), so the server answers 500 for it: the client must fall back to url.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import obstore
from obstore.store import S3Store

from corpus import corpus_table
from emulators import S3Emulator, free_port
from sharing_server import TOKEN, RunningServer, start_server

BUCKET = "dircorpus"
ROLE = "arn:aws:iam::123456789012:role/dir-reader"
TABLES = {
    "plain": "dat__basic_append",
    "parted": "dat__basic_partitioned",
    "dv": "drs__table-with-dv-small",
    "cm": "drs__table_with_column_mapping",
    "cdf": "drs__cdf-table",
}
CDF_TABLES = ("cdf",)


def location(alias: str) -> str:
    return f"s3://{BUCKET}/tables/{alias}"


def upload(s3: S3Emulator, source: Path, prefix: str) -> None:
    """Every file under ``source`` to ``s3://BUCKET/prefix/...``."""
    store = S3Store(BUCKET, config=s3.options)  # type: ignore[arg-type]
    for path in sorted(source.rglob("*")):
        if path.is_file():
            obstore.put(store, f"{prefix}/{path.relative_to(source).as_posix()}", path.read_bytes())


def recipient_options(s3: S3Emulator) -> dict[str, str]:
    """What a recipient of this emulator needs besides vended keys: endpoint and region."""
    return {k: v for k, v in s3.options.items() if k not in _KEYS}


_KEYS = ("aws_access_key_id", "aws_secret_access_key")


def dir_server_config(
    s3: S3Emulator,
    bucket: str,
    tables: list[dict[str, Any]],
    *,
    duration_seconds: int = 3600,
    more_storage: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A server configuration sharing ``tables`` (share ``s``, schema ``sc``) of ``bucket``
    with STS credentials assumed from moto."""
    credentials = {"awsRoleArn": ROLE, "durationSeconds": duration_seconds}
    storage = {"prefix": f"s3://{bucket}/", "options": s3.options, "credentials": credentials}
    return {
        "version": 1,
        "authorization": {"bearerToken": "${DELTAPORT_TEST_TOKEN}"},
        "signingKey": "k",
        "storage": [storage, *(more_storage or [])],
        "shares": [{"name": "s", "schemas": [{"name": "sc", "tables": tables}]}],
    }


def start_dir_server(
    s3: S3Emulator, tmp: Path, extra_tables: list[dict[str, Any]] | None = None
) -> RunningServer:
    s3.create_bucket(BUCKET)
    for alias, name in TABLES.items():
        upload(s3, corpus_table(name).path, f"tables/{alias}")
    upload(s3, corpus_table("dat__basic_append").path, "tables/broken")
    tables: list[dict[str, Any]] = [
        {
            "name": alias,
            "location": location(alias),
            "accessModes": ["url", "dir"],
            "historyShared": True,
        }
        for alias in TABLES
    ]
    tables.append(
        {
            "name": "broken",
            "location": location("broken"),
            "accessModes": ["url", "dir"],
            "historyShared": True,
            "auxiliaryLocations": [f"s3://{BUCKET}/refused/broken"],
        }
    )
    tables.extend(extra_tables or [])
    refused = {
        "prefix": f"s3://{BUCKET}/refused/",
        "credentials": {"awsRoleArn": ROLE, "awsStsEndpoint": f"http://127.0.0.1:{free_port()}"},
    }
    config = dir_server_config(s3, BUCKET, tables, duration_seconds=900, more_storage=[refused])
    return start_server(config, tmp)


def write_dir_profile(path: Path, server: RunningServer, **extra: str) -> Path:
    """A profile for ``server`` (``extra``: more fields, such as ``accessMode``)."""
    profile = {"shareCredentialsVersion": 1, "endpoint": server.url, "bearerToken": TOKEN}
    path.write_text(json.dumps({**profile, **extra}))
    return path


def vend_count(server: RunningServer, alias: str) -> int:
    """Credentials handed out for a table so far (the server logs each)."""
    return server.log().count(f"credentials to recipient default for table s.sc.{alias} at")
