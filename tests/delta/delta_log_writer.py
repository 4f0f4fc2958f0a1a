"""Hand-written Delta logs for tests: exact control over actions, file names and mtimes."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

SCHEMA_STRING = json.dumps(
    {
        "type": "struct",
        "fields": [{"name": "id", "type": "long", "nullable": True, "metadata": {}}],
    }
)


def protocol(reader: int = 1, writer: int = 2, **features: list[str]) -> dict[str, Any]:
    body: dict[str, Any] = {"minReaderVersion": reader, "minWriterVersion": writer}
    body.update(features)
    return {"protocol": body}


def metadata(**configuration: str) -> dict[str, Any]:
    return {
        "metaData": {
            "id": "test-table",
            "format": {"provider": "parquet", "options": {}},
            "schemaString": SCHEMA_STRING,
            "partitionColumns": [],
            "configuration": configuration,
            "createdTime": 1_600_000_000_000,
        }
    }


def add(path: str, rows: int = 1, data_change: bool = True, **extra: Any) -> dict[str, Any]:
    body = {
        "path": path,
        "partitionValues": {},
        "size": 100,
        "modificationTime": 1_600_000_000_000,
        "dataChange": data_change,
        "stats": json.dumps({"numRecords": rows}),
    }
    body.update(extra)
    return {"add": body}


def remove(path: str, data_change: bool = True, **extra: Any) -> dict[str, Any]:
    body = {"path": path, "deletionTimestamp": 1_600_000_000_000, "dataChange": data_change}
    body.update(extra)
    return {"remove": body}


def cdc(path: str) -> dict[str, Any]:
    return {"cdc": {"path": path, "partitionValues": {}, "size": 10, "dataChange": False}}


def commit_info(**fields: Any) -> dict[str, Any]:
    return {"commitInfo": {"operation": "WRITE", **fields}}


def write_commit(
    root: Path, version: int, actions: list[dict[str, Any]], mtime_ms: int | None = None
) -> Path:
    """Write commit ``version`` under ``root/_delta_log`` (and set its mtime when given)."""
    log = root / "_delta_log"
    log.mkdir(parents=True, exist_ok=True)
    path = log / f"{version:020d}.json"
    path.write_text("".join(json.dumps(a) + "\n" for a in actions))
    if mtime_ms is not None:
        os.utime(path, (mtime_ms / 1000, mtime_ms / 1000))
    return path


def simple_table(root: Path, versions: int, mtime_step_ms: int = 1000) -> None:
    """``versions`` commits: v0 creates the table with one file, each later one adds one.
    Commit v is modified at ``(v + 1) * mtime_step_ms``."""
    write_commit(root, 0, [commit_info(), protocol(), metadata(), add("f0.parquet")], mtime_step_ms)
    for v in range(1, versions):
        write_commit(root, v, [commit_info(), add(f"f{v}.parquet")], (v + 1) * mtime_step_ms)
