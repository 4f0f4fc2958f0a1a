"""Delta tables in moto's S3 for catalog servers that offer directory access: the storage
entries that let a server read them and vend STS credentials for them, and the
configuration file the catalog commands take with ``--config``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import yaml
from deltalake import write_deltalake

from emulators import S3Emulator

ROLE = "arn:aws:iam::123456789012:role/catalog-reader"
ROWS = [{"id": i, "region": "eu" if i % 2 else "us"} for i in range(6)]


def storage_entry(s3: S3Emulator, bucket: str, *, credentials: bool = True) -> dict[str, Any]:
    """The server reads ``s3://bucket/`` with the emulator's options; with ``credentials``
    it vends STS credentials (15 minutes) for the tables under it."""
    entry: dict[str, Any] = {"prefix": f"s3://{bucket}/", "options": s3.options}
    if credentials:
        entry["credentials"] = {"awsRoleArn": ROLE, "durationSeconds": 900}
    return entry


def write_lake_table(s3: S3Emulator, location: str) -> None:
    """Six rows partitioned by ``region``, one commit (the bucket must exist)."""
    write_deltalake(
        location,
        pa.Table.from_pylist(ROWS),
        partition_by=["region"],
        storage_options=s3.deltalake_options,
    )


def write_config(path: Path, config: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config))
    return path
