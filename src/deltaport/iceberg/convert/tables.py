"""Delta tables as Iceberg tables: for each table location, its field ids, manifests and
one Iceberg snapshot per Delta version served, built only for versions not built before.
The files readers open lie in a metadata directory of the server for a local table, and
under the table's own location for a cloud table (see :mod:`deltaport.iceberg.convert.files`)."""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import asdict, dataclass
from pathlib import Path

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from deltaport.catalog.model import SharedTable
from deltaport.delta import DeltaTable, Snapshot
from deltaport.delta.errors import DeltaError
from deltaport.delta.model import DeletionVector
from deltaport.iceberg.avro.binary import concatenated
from deltaport.iceberg.convert.avro_schemas import PartitionColumn
from deltaport.iceberg.convert.bounds import stats_columns
from deltaport.iceberg.convert.cleanup import References, plan_removal, rewrite_lines
from deltaport.iceberg.convert.field_ids import FieldIds
from deltaport.iceberg.convert.files import (
    METADATA_FOLDER,
    MetadataFiles,
    append_whole,
    name_in,
    reader_path,
)
from deltaport.iceberg.convert.manifest_index import MANIFEST_INDEX, forget_manifests
from deltaport.iceberg.convert.manifests import DataFiles, ManifestStore, SnapshotFiles
from deltaport.iceberg.convert.metadata import (
    LoadedTable,
    SnapshotEntry,
    canonical,
    partition_spec,
    table_metadata,
    table_uuid,
)
from deltaport.iceberg.convert.schema import IcebergSchema, field_ids_at, iceberg_schema
from deltaport.iceberg.errors import UnsupportedTable
from deltaport.iceberg.model.metadata import IcebergType, MappedField, PartitionSpec, Schema
from deltaport.protocol.schema import parse_schema
from deltaport.read.deletion_vectors import DeletionVectorError
from deltaport.read.partition_values import partition_columns
from deltaport.sharing import TableHistory, TableRefusal, TableResolver
from deltaport.storage import StorageError
from deltaport.storage.uri import Location, resolve_log_path

DELETION_VECTORS = "deletionVectors"
LOCATION_FILE = "location"
"""The file naming the table location a bookkeeping directory is of (its name is a digest)."""
_FILE_COLUMNS = ["path", "partition_values", "size", "stats", "deletion_vector"]


class IcebergTables:
    """Iceberg metadata for every table served; the server's bookkeeping under ``root``
    (one directory per table location). Which versions are served is the resolver's
    answer, the same as the sharing API's (:mod:`deltaport.sharing`)."""

    def __init__(self, root: Path, resolver: TableResolver | None = None) -> None:
        self._root = root
        self._resolver = resolver or TableResolver()
        self._lock = threading.Lock()
        self._states: dict[str, _TableState] = {}

    def load(self, table: SharedTable, all_snapshots: bool = True) -> LoadedTable:
        """The metadata of ``table`` at its latest version, with one snapshot per version
        from its start version when its history is shared (``all_snapshots``), else only
        the latest. Raises :class:`TableRefusal` for a table the rules do not serve (its
        latest version before its ``startVersion``)."""
        history = self._resolver.history(table, all_snapshots)
        delta_table = self._resolver.delta_table(table)
        state = self._state(table.location, table.storage_options)
        return state.load(delta_table, history)

    def locations(self) -> list[str]:
        """The table locations this directory holds metadata of (as their URIs)."""
        if not self._root.is_dir():
            return []
        found = (d / LOCATION_FILE for d in self._root.iterdir())
        return sorted(f.read_text().strip() for f in found if f.is_file())

    def cleanup(
        self,
        location: Location,
        options: dict[str, str],
        tables: list[SharedTable],
        cutoff_ms: int,
        *,
        dry_run: bool = False,
    ) -> list[str]:
        """Remove the Iceberg files of ``location`` that no version the catalog serves
        needs (``tables``: the shared tables at it, offered to Iceberg readers; none: the
        table is served no more) and that are older than ``cutoff_ms``; their paths."""
        state = self._state(location, options)
        served: set[str] = set()
        if tables:
            delta_table = self._resolver.delta_table(tables[0])
            for table in {(t.history_shared, t.start_version): t for t in tables}.values():
                for all_snapshots in (True, False):
                    try:
                        history = self._resolver.history(table, all_snapshots)
                    except TableRefusal:
                        continue  # served at no version yet
                    loaded = state.load(delta_table, history)
                    served.add(f"{METADATA_FOLDER}/{name_in(loaded.metadata_location)}")
        return state.remove(served, cutoff_ms, dry_run=dry_run)

    def _state(self, location: Location, options: dict[str, str]) -> _TableState:
        with self._lock:
            state = self._states.get(location.uri)
            if state is None:
                name = hashlib.sha256(location.uri.encode()).hexdigest()[:24]
                directory = self._root / name
                if location.kind == "local":
                    files = MetadataFiles.local(directory)
                else:
                    files = MetadataFiles.cloud(location, options)
                state = self._states[location.uri] = _TableState(directory, location, files)
            return state


@dataclass(frozen=True)
class _Built:
    entry: SnapshotEntry
    schema_string: str
    partition_columns: tuple[str, ...]
    column_mapping: bool
    ids: str
    """A digest of the schema's field ids: a version built with other ids is built again."""


class _TableState:
    def __init__(self, directory: Path, location: Location, files: MetadataFiles) -> None:
        self.directory = directory
        self.location = location
        self._files = files
        self._lock = threading.Lock()
        self._built: dict[int, _Built] = {}
        self._schemas: dict[str, IcebergSchema] = {}
        self._ids: FieldIds | None = None
        self._manifests: ManifestStore | None = None
        self._spec_key: tuple[str, ...] | None = None
        self._references = References()
        self._named = False
        self._index = directory / "snapshots.jsonl"
        if self._index.exists():
            for line in self._index.read_text().splitlines():
                item = json.loads(line)
                entry = SnapshotEntry(**item["entry"])
                if files.exists(name_in(entry.manifest_list)):
                    self._built[entry.version] = _Built(
                        entry,
                        item["schema"],
                        tuple(item["partitions"]),
                        item["mapped"],
                        item.get("ids", ""),
                    )

    def load(self, delta_table: DeltaTable, history: TableHistory) -> LoadedTable:
        with self._lock:
            latest = history.latest
            self._derive_ids(delta_table, latest)
            chosen = (self._build(delta_table, latest, v) for v in history.versions)
            built = [b for b in chosen if b]
            # every version may have been built by an earlier process: the store still
            # says which format version the table is and where its row ids end
            manifests = self._manifest_store(self._schema(latest), latest)
            self._name_location()
            return self._metadata(latest, built, manifests)

    def _name_location(self) -> None:
        """Write (once) which location the directory is of: the sweeps find it by that."""
        if not self._named:
            named = self.directory / LOCATION_FILE
            if not named.exists():
                self.directory.mkdir(parents=True, exist_ok=True)
                named.write_text(self.location.uri + "\n")
            self._named = True

    def remove(self, served: set[str], cutoff_ms: int, *, dry_run: bool) -> list[str]:
        """Remove what neither ``served`` (metadata file names) nor a file newer than
        ``cutoff_ms`` needs (:mod:`deltaport.iceberg.convert.cleanup`); their paths. The
        files are found without the lock; the lock is held to take out of them what a
        version built meanwhile in this process names, and to remove them."""
        removal = plan_removal(self._files, served, cutoff_ms, self._references)
        with self._lock:
            lists = [b.entry.manifest_list for b in self._built.values()]
            layout = self._manifests.layout_manifests() if self._manifests else []
            roots = [name_in(p) for p in [*lists, *layout]]
            doomed = set(removal.names)
            needed = self._references.needed(self._files, [n for n in roots if n not in doomed])
            names = sorted(doomed - needed)
            if dry_run or not names:
                return [self._files.path(n) for n in names]
            self._files.delete(names)
            gone = set(names)
            for version, built in list(self._built.items()):
                if name_in(built.entry.manifest_list) in gone:
                    del self._built[version]
            rewrite_lines(
                self._index,
                lambda line: name_in(json.loads(line)["entry"]["manifest_list"]) not in gone,
            )
            if self._manifests is not None:
                self._manifests.forget(gone)
            else:
                forget_manifests(self.directory / MANIFEST_INDEX, gone)
            return [self._files.path(n) for n in names]

    def _build(self, delta_table: DeltaTable, latest: Snapshot, version: int) -> _Built | None:
        """The snapshot entry of ``version``; None for an earlier version that cannot be
        offered (gone from the log, its files or vectors vacuumed, partitioned differently,
        or typed beyond Iceberg). The latest version's failure is the answer's."""
        found = self._built.get(version)
        if found is not None and found.ids == self._ids_digest(found):
            return found
        try:
            return self._build_version(delta_table, latest, version)
        except (DeltaError, StorageError, DeletionVectorError, UnsupportedTable, OSError):
            if version == latest.version:
                raise
            return None

    def _build_version(self, delta_table: DeltaTable, latest: Snapshot, version: int) -> _Built:
        snapshot = latest if version == latest.version else delta_table.snapshot(version)
        columns = tuple(snapshot.metadata.partition_columns)
        if self._spec_key is None:
            self._spec_key = tuple(latest.metadata.partition_columns)
        if columns != self._spec_key:
            raise UnsupportedTable("the table's partition columns changed at this version")
        schema = self._schema(snapshot)
        manifests = self._manifest_store(schema, latest)
        files = self._snapshot_files(snapshot)
        first_row_id = manifests.next_row_id
        changed = _changed(delta_table, manifests.built_version, version)
        metrics_of = stats_columns(schema)
        written = manifests.data_manifests(files, metrics_of, version, self._count_rows, changed)
        data_rows = sum(m.rows for m in written)
        vectors = snapshot.files.column("deletion_vector").is_valid().to_numpy()
        if vectors.any():
            with_vectors = files.load(np.flatnonzero(vectors))
            written += manifests.delete_manifests(with_vectors, version, delta_table.storage)
        v3 = manifests.format_version >= 3
        list_path = manifests.manifest_list(written, version, first_row_id if v3 else None)
        entry = SnapshotEntry(
            version,
            snapshot.timestamp,
            list_path,
            0,
            snapshot.num_files,
            data_rows,
            first_row_id if v3 else None,
            manifests.next_row_id - first_row_id if v3 else None,
        )
        mapped = snapshot.metadata.column_mapping_mode != "none"
        text = snapshot.metadata.schema_string
        built = _Built(entry, text, columns, mapped, _digest(schema))
        self._built[version] = built
        item = {
            "entry": asdict(entry),
            "schema": built.schema_string,
            "partitions": columns,
            "mapped": mapped,
            "ids": built.ids,
        }
        append_whole(self._index, json.dumps(item) + "\n")
        return built

    def _schema(self, snapshot: Snapshot) -> IcebergSchema:
        mapped = snapshot.metadata.column_mapping_mode != "none"
        return self._converted(
            snapshot.metadata.schema_string, mapped, tuple(snapshot.metadata.partition_columns)
        )

    def _converted(self, text: str, mapped: bool, partitions: tuple[str, ...]) -> IcebergSchema:
        found = self._schemas.get(text)
        if found is None:
            assert self._ids is not None, "field ids are derived before a schema is converted"
            try:
                struct = parse_schema(text)
            except ValueError as exc:
                raise UnsupportedTable(f"the table's schema cannot be read: {exc}") from None
            found = iceberg_schema(
                struct, self._ids, column_mapping=mapped, partition_columns=partitions
            )
            self._schemas[text] = found
        return found

    def _derive_ids(self, delta_table: DeltaTable, latest: Snapshot) -> None:
        """Bring the field ids up to ``latest``; what was converted with ids that changed
        (derived again after the log was cleaned up) is made again."""
        before = self._ids
        self._ids = field_ids_at(delta_table, latest, before)
        if before is not None and not self._ids.extends(before):
            self._schemas.clear()
            self._manifests = None
            self._spec_key = None

    def _ids_digest(self, built: _Built) -> str:
        return _digest(
            self._converted(built.schema_string, built.column_mapping, built.partition_columns)
        )

    def _spec(self, schema: IcebergSchema, columns: tuple[str, ...]) -> PartitionSpec:
        by_lower = {name.lower(): name for name in schema.ids}
        pairs = []
        for column in columns:
            name = by_lower.get(column.lower(), column)
            pairs.append((name, schema.ids[name]))
        return partition_spec(pairs)

    def _manifest_store(self, schema: IcebergSchema, latest: Snapshot) -> ManifestStore:
        """The table's manifests; format version 3 where the table may have deletion
        vectors (decided by the latest protocol, for every version alike)."""
        if self._manifests is None:
            snapshot = latest
            spec = self._spec(schema, tuple(snapshot.metadata.partition_columns))
            partition = [
                PartitionColumn(f.name, f.field_id, _primitive(schema.types[f.source_id], f.name))
                for f in spec.fields
            ]
            self._manifests = ManifestStore(
                self.directory,
                self._files,
                partition,
                json.dumps(msgspec.to_builtins(spec.fields)),
                json.dumps(msgspec.to_builtins(schema.schema)),
                3 if DELETION_VECTORS in (latest.protocol.reader_features or ()) else 2,
            )
        return self._manifests

    def _snapshot_files(self, snapshot: Snapshot) -> SnapshotFiles:
        every = snapshot.files.select(_FILE_COLUMNS)

        def load(rows: np.ndarray | None) -> DataFiles:
            files = every if rows is None else every.take(rows)
            return self._data_files(files, snapshot)

        return SnapshotFiles(
            every.column("path"), every.column("size"), every.column("stats"), load
        )

    def _data_files(self, files: pa.Table, snapshot: Snapshot) -> DataFiles:
        struct = parse_schema(snapshot.metadata.schema_string)
        fields = [struct.field(c) for c in snapshot.metadata.partition_columns]
        mapped = snapshot.metadata.column_mapping_mode != "none"
        typed = partition_columns(files.column("partition_values"), fields, physical=mapped)
        vectors: list[DeletionVector | None] = []
        column = files.column("deletion_vector")
        if column.null_count != files.num_rows:
            vectors = [DeletionVector.from_json(v) if v else None for v in column.to_pylist()]
        paths, sizes, stats = (_array(files.column(c)) for c in ("path", "size", "stats"))
        return DataFiles(self._resolved(paths), sizes, stats, typed, vectors)

    def _resolved(self, raw: pa.Array) -> pa.Array:
        """Log paths as readers open them: relative, unescaped paths (the common case)
        joined to the table's root at once, any other path resolved on its own."""
        prefix = reader_path(self.location.child("x"))[:-1]
        joined = pc.utf8_replace_slice(raw, 0, 0, prefix)
        text = concatenated(raw)
        if b"%" not in text and b":" not in text and not pc.any(pc.starts_with(raw, "/")).as_py():
            return joined
        other = pc.or_(
            pc.or_(pc.match_substring(raw, "%"), pc.match_substring(raw, ":")),
            pc.starts_with(raw, "/"),
        )
        resolved = [
            self._resolve(p) if odd else None
            for p, odd in zip(raw.to_pylist(), other.to_pylist(), strict=True)
        ]
        return pc.if_else(other, pa.array(resolved, pa.string()), joined)

    def _resolve(self, raw: str) -> str:
        return reader_path(resolve_log_path(self.location, raw))

    def _count_rows(self, path: str) -> int:
        if self.location.kind != "local":
            raise UnsupportedTable(f"a data file has no row count in its statistics: {path}")
        return int(pq.read_metadata(path).num_rows)

    def _metadata(
        self, latest: Snapshot, built: list[_Built], manifests: ManifestStore
    ) -> LoadedTable:
        schema_ids: dict[str, int] = {}
        schemas: list[Schema] = []
        entries: list[SnapshotEntry] = []
        for b in built:
            schema_id = schema_ids.get(b.schema_string)
            if schema_id is None:
                schema_id = schema_ids[b.schema_string] = len(schemas)
                converted = self._converted(b.schema_string, b.column_mapping, b.partition_columns)
                schemas.append(msgspec.structs.replace(converted.schema, schema_id=schema_id))
            entries.append(SnapshotEntry(**{**asdict(b.entry), "schema_id": schema_id}))
        current = self._schema(latest)
        name_mapping = _union_mapping(
            current.name_mapping,
            [
                self._converted(b.schema_string, b.column_mapping, b.partition_columns)
                for b in built
            ],
        )
        location = reader_path(self.location)
        properties = {
            "schema.name-mapping.default": json.dumps(msgspec.to_builtins(name_mapping)),
            "delta.version": str(latest.version),
            "delta.table-id": latest.metadata.id,
        }
        metadata = table_metadata(
            location=location,
            table_id=table_uuid(latest.metadata.id, self.location.uri),
            schemas=schemas,
            last_column_id=max(s.last_column_id for s in self._schemas.values()),
            spec=self._spec(current, tuple(latest.metadata.partition_columns)),
            snapshots=entries,
            properties=properties,
            format_version=manifests.format_version,
            next_row_id=manifests.next_row_id,
        )
        body = canonical(metadata)
        digest = hashlib.sha256(body).hexdigest()[:32]
        name = f"metadata/{latest.version:020d}-{digest}.metadata.json"
        if not self._files.exists(name):
            self._files.write(name, body)
        return LoadedTable(self._files.path(name), metadata, digest)


def _digest(schema: IcebergSchema) -> str:
    text = json.dumps(msgspec.to_builtins([schema.schema, schema.name_mapping]), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _array(column: pa.ChunkedArray) -> pa.Array:
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def _changed(delta_table: DeltaTable, since: int | None, version: int) -> pa.Array | None:
    """The log paths of the files added or removed after ``since`` up to ``version``;
    None when there is no such range or its commits cannot be read."""
    if since is None or since >= version:
        return None
    try:
        actions = delta_table.changes(since + 1, version).files
    except (DeltaError, StorageError, OSError):
        return None
    files = pc.filter(actions.column("path"), pc.not_equal(actions.column("action"), "cdc"))
    return pc.unique(files.combine_chunks())


def _primitive(iceberg_type: IcebergType, column: str) -> str:
    if not isinstance(iceberg_type, str):
        raise UnsupportedTable(f"partition column {column!r} is not of a primitive type")
    return iceberg_type


def _union_mapping(current: list[MappedField], schemas: list[IcebergSchema]) -> list[MappedField]:
    """The current schema's name mapping, plus the top-level columns of earlier served
    schemas it no longer has: files written before a column was dropped or replaced still
    hold it, and some readers refuse a file column the mapping does not name."""
    out = list(current)
    taken = {name for entry in out for name in entry.names}
    for schema in schemas:
        for entry in schema.name_mapping:
            if not taken.intersection(entry.names):
                out.append(entry)
                taken.update(entry.names)
    return out
