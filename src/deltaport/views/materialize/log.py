"""The materialized table's Delta log: its state read back by deltaport's own reader,
and a new version committed with put-if-absent, the point at which it becomes visible."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from deltaport.delta import DeltaTable, Metadata, Protocol, TableNotFoundError
from deltaport.protocol.schema import from_arrow_schema, schema_to_json
from deltaport.storage import ObjectExistsError, Storage

SOURCE_VERSION_KEY = "deltaport.sourceVersion"  # in each commit's commitInfo
PROTOCOL = Protocol(1, 2)


class CommitConflictError(RuntimeError):
    """Another writer committed the version this materialization meant to write."""


@dataclass(frozen=True)
class TableState:
    """What the materialized table holds: its latest version (-1 when it has none), the
    source version that version reflects, and its active files by name."""

    version: int
    source_version: int | None
    files: frozenset[str]


def read_state(location: str) -> TableState:
    table = DeltaTable(location)
    try:
        version = table.latest_version()
    except TableNotFoundError:
        return TableState(-1, None, frozenset())
    snapshot = table.snapshot(version)
    entry = table.history(version, version)
    info = entry[0].commit_info if entry else {}
    parameters = info.get("operationParameters") or {}
    source = parameters.get(SOURCE_VERSION_KEY)
    paths = frozenset(str(path) for path in snapshot.files.column("path").to_pylist())
    return TableState(version, None if source is None else int(source), paths)


def view_metadata(output_schema: pa.Schema, table_id: str) -> Metadata:
    schema = schema_to_json(from_arrow_schema(output_schema))
    return Metadata(id=table_id, schema_string=schema, created_time=0)


def table_id(name: str) -> str:
    """A stable table id for one binding's table (a UUID derived from its name)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"deltaport-view:{name}"))


@dataclass(frozen=True)
class AddedFile:
    name: str
    size: int
    stats: Mapping[str, Any]


def commit(
    storage: Storage,
    version: int,
    *,
    timestamp_ms: int,
    source_version: int,
    metadata: Metadata | None,
    added: Sequence[AddedFile],
    removed: Sequence[str],
) -> None:
    """Write ``_delta_log/<version>.json`` if no commit has that version; ``metadata``
    (with the protocol) only for the table's first version."""
    actions: list[dict[str, Any]] = [
        {
            "commitInfo": {
                "timestamp": timestamp_ms,
                "operation": "MATERIALIZE VIEW",
                "operationParameters": {SOURCE_VERSION_KEY: str(source_version)},
            }
        }
    ]
    if metadata is not None:
        actions.append({"protocol": PROTOCOL.to_json()})
        actions.append({"metaData": metadata.to_json()})
    for name in removed:
        actions.append(
            {"remove": {"path": name, "deletionTimestamp": timestamp_ms, "dataChange": True}}
        )
    for file in added:
        add = {
            "path": file.name,
            "partitionValues": {},
            "size": file.size,
            "modificationTime": timestamp_ms,
            "dataChange": True,
            "stats": json.dumps(file.stats, ensure_ascii=False),
        }
        actions.append({"add": add})
    text = "".join(json.dumps(action, ensure_ascii=False) + "\n" for action in actions)
    location = storage.resolve(f"_delta_log/{version:020d}.json")
    try:
        storage.write_new(location, text.encode("utf-8"))
    except ObjectExistsError:
        raise CommitConflictError(f"version {version} was committed by another writer") from None
