"""JSON commit files parsed with msgspec into typed actions, and file actions into Arrow."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import msgspec
import pyarrow as pa

from deltaport.delta.errors import LogCorruptError
from deltaport.delta.log_segment import LOG_DIR
from deltaport.delta.model import FILE_SCHEMA, Metadata, Protocol
from deltaport.storage import ObjectInfo, Storage, StorageError


class DeletionVectorJson(msgspec.Struct):
    storageType: str
    pathOrInlineDv: str
    sizeInBytes: int
    cardinality: int
    offset: int | None = None


class FileActionJson(msgspec.Struct):
    """The union of add, remove and cdc fields (absent ones stay at their defaults)."""

    path: str
    partitionValues: dict[str, str | None] | None = None
    size: int | None = None
    modificationTime: int | None = None
    dataChange: bool = True
    stats: str | None = None
    tags: dict[str, str | None] | None = None
    deletionVector: DeletionVectorJson | None = None
    baseRowId: int | None = None
    defaultRowCommitVersion: int | None = None
    deletionTimestamp: int | None = None


class _ActionJson(msgspec.Struct):
    add: FileActionJson | None = None
    remove: FileActionJson | None = None
    cdc: FileActionJson | None = None
    metaData: dict[str, Any] | None = None
    protocol: dict[str, Any] | None = None
    commitInfo: dict[str, Any] | None = None


_DECODER = msgspec.json.Decoder(_ActionJson)


class _ProtocolShape(msgspec.Struct):
    minReaderVersion: int
    minWriterVersion: int
    readerFeatures: list[str] | None = None
    writerFeatures: list[str] | None = None


class _FormatShape(msgspec.Struct):
    provider: str = "parquet"
    options: dict[str, str | None] | None = None


class _MetadataShape(msgspec.Struct):
    """Some old writers left schemaString out (or null); it becomes "" rather than fail the
    whole log, so file listings still work and readers see an empty schema string."""

    schemaString: str | None = None
    id: str = ""
    format: _FormatShape | None = None
    partitionColumns: list[str] | None = None
    configuration: dict[str, str | None] | None = None
    name: str | None = None
    description: str | None = None
    createdTime: int | None = None


def protocol_from_action(value: Mapping[str, Any], where: str) -> Protocol:
    """A validated [`Protocol`][deltaport.delta.Protocol] from a protocol action (JSON or checkpoint
    row)."""
    try:
        shape = msgspec.convert(value, _ProtocolShape)
    except msgspec.ValidationError as exc:
        raise LogCorruptError(f"malformed protocol action in {where}: {exc}") from exc
    return Protocol.from_json(msgspec.to_builtins(shape))


def metadata_from_action(value: Mapping[str, Any], where: str) -> Metadata:
    """A validated [`Metadata`][deltaport.delta.Metadata] from a metaData action; null settings are
    dropped."""
    try:
        shape = msgspec.convert(value, _MetadataShape)
    except msgspec.ValidationError as exc:
        raise LogCorruptError(f"malformed metaData action in {where}: {exc}") from exc
    plain = msgspec.to_builtins(shape)
    plain["schemaString"] = plain.get("schemaString") or ""
    plain["configuration"] = {
        k: v for k, v in (plain.get("configuration") or {}).items() if v is not None
    }
    if plain.get("format"):
        options = plain["format"].get("options") or {}
        plain["format"]["options"] = {k: v for k, v in options.items() if v is not None}
    return Metadata.from_json(plain)


@dataclass(frozen=True)
class Commit:
    """One commit's actions: file actions in log order as (kind, action) pairs."""

    version: int
    file_actions: list[tuple[str, FileActionJson]]
    commit_info: dict[str, Any] | None
    protocol: Protocol | None
    metadata: Metadata | None

    @property
    def in_commit_timestamp(self) -> int | None:
        value = (self.commit_info or {}).get("inCommitTimestamp")
        return value if isinstance(value, int) else None


def parse_commit(version: int, data: bytes, name: str) -> Commit:
    """Parse the NDJSON bytes of commit ``version`` (``name`` only for messages)."""
    try:
        return _parse_commit(version, data, name)
    except LogCorruptError as exc:
        raise LogCorruptError(str(exc), version) from exc


def _parse_commit(version: int, data: bytes, name: str) -> Commit:
    actions: list[tuple[str, FileActionJson]] = []
    commit_info = protocol = metadata = None
    for lineno, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            action = _DECODER.decode(line)
        except (msgspec.DecodeError, UnicodeDecodeError) as exc:  # bytes not UTF-8
            raise LogCorruptError(f"malformed JSON in {name} line {lineno}: {exc}") from exc
        if action.add is not None:
            actions.append(("add", action.add))
        if action.remove is not None:
            actions.append(("remove", action.remove))
        if action.cdc is not None:
            actions.append(("cdc", action.cdc))
        if action.metaData is not None:
            metadata = action.metaData
        if action.protocol is not None:
            protocol = action.protocol
        if action.commitInfo is not None:
            commit_info = action.commitInfo
    return Commit(
        version,
        actions,
        commit_info,
        protocol_from_action(protocol, name) if protocol is not None else None,
        metadata_from_action(metadata, name) if metadata is not None else None,
    )


def _map_items(values: Mapping[str, str | None] | None) -> list[tuple[str, str | None]] | None:
    return None if values is None else list(values.items())


def file_actions_table(actions: Iterable[FileActionJson]) -> pa.Table:
    """File actions as a [`FILE_SCHEMA`][deltaport.delta.FILE_SCHEMA] table (one Python pass over
    commit actions)."""
    rows = list(actions)
    dvs = [a.deletionVector for a in rows]
    columns: list[pa.Array] = [
        pa.array([a.path for a in rows], pa.string()),
        pa.array([_map_items(a.partitionValues) for a in rows], FILE_SCHEMA.field(1).type),
        pa.array([a.size for a in rows], pa.int64()),
        pa.array([a.modificationTime for a in rows], pa.int64()),
        pa.array([a.dataChange for a in rows], pa.bool_()),
        pa.array([a.stats for a in rows], pa.string()),
        pa.array([_map_items(a.tags) for a in rows], FILE_SCHEMA.field(6).type),
        pa.array(
            [
                None
                if dv is None
                else {
                    "storageType": dv.storageType,
                    "pathOrInlineDv": dv.pathOrInlineDv,
                    "offset": dv.offset,
                    "sizeInBytes": dv.sizeInBytes,
                    "cardinality": dv.cardinality,
                }
                for dv in dvs
            ],
            FILE_SCHEMA.field(7).type,
        ),
        pa.array([a.baseRowId for a in rows], pa.int64()),
        pa.array([a.defaultRowCommitVersion for a in rows], pa.int64()),
    ]
    return pa.Table.from_arrays(columns, schema=FILE_SCHEMA)


def read_commits(storage: Storage, entries: Sequence[tuple[int, ObjectInfo]]) -> list[Commit]:
    """Read and parse commit files (in parallel when there are several), in order."""

    def read_one(entry: tuple[int, ObjectInfo]) -> Commit:
        version, obj = entry
        location = storage.resolve(f"{LOG_DIR}/{obj.name}")
        try:
            data = storage.read(location)
        except StorageError as exc:
            raise LogCorruptError(
                f"cannot read commit {version} ({location.uri}): {exc}", version
            ) from exc
        return parse_commit(version, data, obj.name)

    if len(entries) <= 2:
        return [read_one(e) for e in entries]
    with ThreadPoolExecutor(max_workers=min(16, len(entries))) as pool:
        return list(pool.map(read_one, entries))
