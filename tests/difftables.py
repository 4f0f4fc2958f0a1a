"""Building branched Delta tables for differ tests, the way users do."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
from deltalake import write_deltalake

_VERSIONED = re.compile(r"^(\d{20})\.")


def write(path: Path, columns: dict[str, list[Any]], mode: str = "append", **kw: Any) -> None:
    write_deltalake(str(path), pa.table(columns), mode=mode, **kw)


def branch(source: Path, target: Path) -> Path:
    """A branch of ``source``: a full copy of the table as it is now."""
    shutil.copytree(source, target)
    return target


def copy_log_until(source: Path, target: Path, last_version: int) -> Path:
    """A copy of ``source``'s log as it was at ``last_version`` (commits, checkpoints and
    sidecars up to it; data files are not needed by the differ)."""
    log = target / "_delta_log"
    log.mkdir(parents=True)
    for item in (source / "_delta_log").iterdir():
        match = _VERSIONED.match(item.name)
        if item.is_file() and match and int(match.group(1)) <= last_version:
            shutil.copy2(item, log / item.name)
    sidecars = source / "_delta_log" / "_sidecars"
    if sidecars.is_dir():
        shutil.copytree(sidecars, log / "_sidecars")
    return target


def commit_file(table: Path, version: int) -> Path:
    return table / "_delta_log" / f"{version:020d}.json"


def write_commit(table: Path, version: int, actions: list[dict[str, Any]]) -> None:
    """Write one commit file directly, as a writer would."""
    path = commit_file(table, version)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(a) + "\n" for a in actions))


def commit_info(operation: str, timestamp: int, **parameters: str) -> dict[str, Any]:
    return {
        "commitInfo": {
            "timestamp": timestamp,
            "operation": operation,
            "operationParameters": parameters,
            "operationMetrics": {},
        }
    }


SCHEMA_ID_LONG = json.dumps(
    {
        "type": "struct",
        "fields": [{"name": "id", "type": "long", "nullable": True, "metadata": {}}],
    }
)


def new_table_actions(timestamp: int) -> list[dict[str, Any]]:
    return [
        commit_info("CREATE TABLE", timestamp),
        {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
        {
            "metaData": {
                "id": "00000000-0000-0000-0000-000000000001",
                "format": {"provider": "parquet", "options": {}},
                "schemaString": SCHEMA_ID_LONG,
                "partitionColumns": [],
                "configuration": {},
                "createdTime": timestamp,
            }
        },
    ]


def add_action(path: str, rows: int, timestamp: int) -> dict[str, Any]:
    return {
        "add": {
            "path": path,
            "partitionValues": {},
            "size": 100,
            "modificationTime": timestamp,
            "dataChange": True,
            "stats": json.dumps({"numRecords": rows}),
        }
    }
