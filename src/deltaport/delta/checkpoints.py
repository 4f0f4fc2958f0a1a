"""Checkpoint reading: classic, multi-part and v2 (JSON or parquet top file plus sidecars).

Only the live ``add`` rows matter for a snapshot (a checkpoint's ``remove`` rows are
tombstones for vacuum). Parquet is read with pyarrow, selecting just the needed leaf
columns; no per-row Python work except encoding ``stats_parsed`` for rows without ``stats``.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

import msgspec
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from deltaport.delta.commits import (
    FileActionJson,
    file_actions_table,
    metadata_from_action,
    protocol_from_action,
)
from deltaport.delta.errors import LogCorruptError
from deltaport.delta.log_segment import LOG_DIR, Checkpoint
from deltaport.delta.model import FILE_SCHEMA, Metadata, Protocol
from deltaport.storage import Location, Storage, StorageError, resolve_log_path

_ADD_FIELDS = {
    "path": "path",
    "partition_values": "partitionValues",
    "size": "size",
    "modification_time": "modificationTime",
    "data_change": "dataChange",
    "stats": "stats",
    "tags": "tags",
    "deletion_vector": "deletionVector",
    "base_row_id": "baseRowId",
    "default_row_commit_version": "defaultRowCommitVersion",
}
_DV_FIELDS = ("storageType", "pathOrInlineDv", "offset", "sizeInBytes", "cardinality")


def _encode_other(value: Any) -> Any:
    """pandas-style timestamps (from nanosecond columns) become plain datetimes."""
    to_pydatetime = getattr(value, "to_pydatetime", None)
    if to_pydatetime is None:
        raise NotImplementedError(f"cannot encode {type(value).__name__} in stats")
    return to_pydatetime()


_STATS_ENCODER = msgspec.json.Encoder(enc_hook=_encode_other, decimal_format="number")


@dataclass(frozen=True)
class CheckpointState:
    """What a checkpoint holds for readers: live adds, protocol and metadata."""

    adds: pa.Table
    protocol: Protocol
    metadata: Metadata


@dataclass
class _FileContent:
    """What one checkpoint file (top-level part or sidecar) contributed."""

    adds: pa.Table | None = None
    protocol: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    sidecars: tuple[str, ...] = ()


class _SidecarJson(msgspec.Struct):
    path: str


class _CheckpointLineJson(msgspec.Struct):
    add: FileActionJson | None = None
    metaData: dict[str, Any] | None = None
    protocol: dict[str, Any] | None = None
    sidecar: _SidecarJson | None = None


_LINE_DECODER = msgspec.json.Decoder(_CheckpointLineJson)


def read_checkpoint(storage: Storage, checkpoint: Checkpoint) -> CheckpointState:
    """Read every file of ``checkpoint`` (and its sidecars, in parallel) into one state."""
    try:
        return _read_checkpoint(storage, checkpoint)
    except LogCorruptError as exc:
        raise LogCorruptError(str(exc), checkpoint.version) from exc


def _read_checkpoint(storage: Storage, checkpoint: Checkpoint) -> CheckpointState:

    def read_top(name: str) -> _FileContent:
        location = storage.resolve(f"{LOG_DIR}/{name}")
        if name.endswith(".json"):
            return _read_json_top(storage, location)
        return _read_parquet(storage, location, with_actions=True)

    def read_sidecar(path: str) -> _FileContent:
        return _read_parquet(storage, _sidecar_location(storage, path), with_actions=False)

    with ThreadPoolExecutor(max_workers=8) as pool:
        tops = list(pool.map(read_top, [obj.name for obj in checkpoint.files]))
        sidecar_paths = [path for top in tops for path in top.sidecars]
        contents = tops + list(pool.map(read_sidecar, sidecar_paths))
    protocol_json = next((c.protocol for c in contents if c.protocol is not None), None)
    metadata_json = next((c.metadata for c in contents if c.metadata is not None), None)
    if protocol_json is None:
        raise LogCorruptError(f"checkpoint at version {checkpoint.version} has no protocol action")
    if metadata_json is None:
        raise LogCorruptError(f"checkpoint at version {checkpoint.version} has no metaData action")
    tables = [c.adds for c in contents if c.adds is not None]
    adds = pa.concat_tables(tables) if tables else pa.Table.from_batches([], FILE_SCHEMA)
    where = f"checkpoint {checkpoint.version}"
    protocol = protocol_from_action(protocol_json, where)
    metadata = metadata_from_action(metadata_json, where)
    return CheckpointState(adds, protocol, metadata)


def _sidecar_location(storage: Storage, path: str) -> Location:
    if urlsplit(path).scheme:
        return resolve_log_path(storage.root, path)
    return storage.resolve(f"{LOG_DIR}/_sidecars/{unquote(path)}")


def _read_json_top(storage: Storage, location: Location) -> _FileContent:
    data = _read_bytes(storage, location)
    content = _FileContent()
    sidecars: list[str] = []
    adds: list[FileActionJson] = []
    for lineno, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            action = _LINE_DECODER.decode(line)
        except (msgspec.DecodeError, UnicodeDecodeError) as exc:  # bytes not UTF-8
            raise LogCorruptError(
                f"malformed JSON in checkpoint {location.uri} line {lineno}: {exc}"
            ) from exc
        if action.add is not None:
            adds.append(action.add)
        if action.sidecar is not None:
            sidecars.append(action.sidecar.path)
        if action.protocol is not None:
            content.protocol = action.protocol
        if action.metaData is not None:
            content.metadata = action.metaData
    if adds:
        content.adds = file_actions_table(adds)
    content.sidecars = tuple(sidecars)
    return content


def _read_bytes(storage: Storage, location: Location) -> bytes:
    try:
        return storage.read(location)
    except StorageError as exc:
        raise LogCorruptError(f"cannot read checkpoint file {location.uri}: {exc}") from exc


def _read_parquet(storage: Storage, location: Location, *, with_actions: bool) -> _FileContent:
    """Read adds (and, for top-level files, protocol/metaData/sidecars) of one parquet file."""
    try:
        pf = pq.ParquetFile(storage.open_input(location))
        schema = pf.schema_arrow
        add_names = _add_subfields(schema)
        columns = [f"add.{name}" for name in add_names]
        if with_actions:
            columns += [c for c in ("metaData", "protocol", "sidecar") if c in schema.names]
        table = pf.read(columns=columns).flatten()
    except StorageError as exc:
        raise LogCorruptError(f"cannot read checkpoint file {location.uri}: {exc}") from exc
    except (pa.ArrowException, OSError) as exc:
        raise LogCorruptError(f"unreadable checkpoint file {location.uri}: {exc}") from exc
    content = _FileContent()
    if add_names:
        content.adds = _adds_from_flat(table, add_names)
        if "stats_parsed" in _struct_children(schema, "add"):
            content.adds = _fill_stats_from_parsed(pf, content.adds)
    if with_actions:
        content.protocol = _first_row(table, schema, "protocol")
        content.metadata = _first_row(table, schema, "metaData")
        if "sidecar" in schema.names:
            paths = table.column("sidecar.path").drop_null().to_pylist()
            content.sidecars = tuple(str(p) for p in paths)
    return content


def _struct_children(schema: pa.Schema, name: str) -> dict[str, pa.DataType]:
    if name not in schema.names or not pa.types.is_struct(schema.field(name).type):
        return {}
    return {f.name: f.type for f in schema.field(name).type}


def _add_subfields(schema: pa.Schema) -> list[str]:
    children = _struct_children(schema, "add")
    return [n for n in _ADD_FIELDS.values() if n in children]


def _adds_from_flat(table: pa.Table, add_names: list[str]) -> pa.Table:
    """The rows that are add actions, as a [`FILE_SCHEMA`][deltaport.delta.FILE_SCHEMA] table."""
    live = _add_rows(table.select([f"add.{name}" for name in add_names]))
    n = live.num_rows
    arrays: list[pa.ChunkedArray | pa.Array] = []
    for field in FILE_SCHEMA:
        source = _ADD_FIELDS[field.name]
        if source not in add_names:
            arrays.append(pa.nulls(n, field.type))
        elif field.name == "deletion_vector":
            arrays.append(_deletion_vectors(live.column(f"add.{source}")))
        else:
            arrays.append(live.column(f"add.{source}").cast(field.type))
    return pa.Table.from_arrays(arrays, schema=FILE_SCHEMA)


def _add_rows(table: pa.Table) -> pa.Table:
    """The rows holding an add action: a zero-copy slice when they are contiguous (the
    few protocol, metaData and other rows usually come first or last), else a filter."""
    paths = table.column("add.path")
    count = len(paths) - paths.null_count
    if count == len(paths):
        return table
    first = pc.index(pc.is_valid(paths), True).as_py()
    if first >= 0 and paths.slice(first, count).null_count == 0:
        return table.slice(first, count)
    return table.filter(pc.is_valid(paths))


def _deletion_vectors(column: pa.ChunkedArray) -> pa.Array:
    dv = column.combine_chunks()
    target = FILE_SCHEMA.field("deletion_vector").type
    present = {f.name for f in dv.type}
    children = [
        dv.field(name).cast(target.field(name).type)
        if name in present
        else pa.nulls(len(dv), target.field(name).type)
        for name in _DV_FIELDS
    ]
    return pa.StructArray.from_arrays(children, fields=list(target), mask=pc.invert(dv.is_valid()))


def _fill_stats_from_parsed(pf: pq.ParquetFile, adds: pa.Table) -> pa.Table:
    """Encode ``add.stats_parsed`` as JSON where ``add.stats`` is null."""
    stats = adds.column("stats")
    if stats.null_count == 0:
        return adds
    parsed = pf.read(columns=["add.path", "add.stats_parsed"]).flatten()
    parsed = parsed.filter(pc.is_valid(parsed.column("add.path"))).column("add.stats_parsed")
    missing = pc.and_(pc.is_null(stats), pc.is_valid(parsed))
    rows = parsed.filter(missing).to_pylist()
    encoded = pa.array([_STATS_ENCODER.encode(_drop_nulls(r)).decode() for r in rows], pa.string())
    filled = pc.replace_with_mask(stats.combine_chunks(), missing.combine_chunks(), encoded)
    return adds.set_column(FILE_SCHEMA.get_field_index("stats"), "stats", filled)


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    return value


def _first_row(table: pa.Table, schema: pa.Schema, name: str) -> dict[str, Any] | None:
    """The first non-null ``name`` struct (protocol, metaData) as JSON-like Python values."""
    children = _struct_children(schema, name)
    if not children:
        return None
    first = next(iter(children))
    rows = table.filter(pc.is_valid(table.column(f"{name}.{first}"))).slice(0, 1)
    if rows.num_rows == 0:
        return None
    return {
        child: _json_like(rows.column(f"{name}.{child}").to_pylist()[0], child_type)
        for child, child_type in children.items()
    }


def _json_like(value: Any, arrow_type: pa.DataType) -> Any:
    """Arrow maps come back as lists of (key, value) pairs; make them objects again."""
    if value is None:
        return None
    if pa.types.is_map(arrow_type):
        return {k: _json_like(v, arrow_type.item_type) for k, v in value}
    if pa.types.is_struct(arrow_type):
        return {f.name: _json_like(value.get(f.name), f.type) for f in arrow_type}
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return [_json_like(v, arrow_type.value_type) for v in value]
    return value
