"""Data manifests and manifest lists of one table, written once and reused.

A snapshot's files are cut into buckets by a hash of their log path (about
[`FILES_PER_MANIFEST`][] files each, the number of buckets a power of two), and each bucket
is one manifest named by a digest of what it holds. A new Delta version only cuts again the
buckets its commits' file actions touched; every other bucket keeps the previous version's
manifest, so the cost of a version follows its change, not the table's size. Manifests are
encoded for all their files at once (:mod:`deltaport.iceberg.avro`).
"""

from __future__ import annotations

import hashlib
import io
import threading
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import fastavro
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from fastavro.types import Schema

from deltaport.delta.model import DeletionVector
from deltaport.iceberg.avro.binary import concatenated
from deltaport.iceberg.avro.container import AvroRecord, container, header
from deltaport.iceberg.avro.entries import EntryColumns, data_entries
from deltaport.iceberg.convert.avro_schemas import (
    PartitionColumn,
    avro_name,
    manifest_entry_schema,
    manifest_list_schema,
)
from deltaport.iceberg.convert.bounds import StatsColumn
from deltaport.iceberg.convert.column_metrics import metric_columns
from deltaport.iceberg.convert.deletion_vectors import puffin_file, vector_blob
from deltaport.iceberg.convert.files import MetadataFiles, name_in
from deltaport.iceberg.convert.manifest_index import MANIFEST_INDEX, ManifestIndex, ManifestInfo
from deltaport.storage import Storage

FILES_PER_MANIFEST = 512


@dataclass(frozen=True)
class DataFiles:
    """What a manifest needs of some files: paths as readers open them, sizes, Delta stats
    and typed partition values (one array per partition column), row by row."""

    paths: pa.Array
    sizes: pa.Array
    stats: pa.Array
    partitions: Mapping[str, pa.Array]
    deletion_vectors: Sequence[DeletionVector | None] = ()
    """Each file's deletion vector (empty: none has one)."""


@dataclass(frozen=True)
class _DeleteFiles:
    """Files with deletion vectors as Python values, as the delete manifests take them."""

    paths: list[str]
    sizes: list[int]
    partitions: dict[str, list[object]]
    deletion_vectors: Sequence[DeletionVector | None]


@dataclass(frozen=True)
class SnapshotFiles:
    """A snapshot's files as the manifests are cut from them: each file's path in the log
    (its bucket is a hash of it), size and stats (what a manifest's name is a digest of),
    and the :class:`DataFiles` of chosen rows (None: all), made on demand, since a new
    version only needs the files of the buckets its commits touched."""

    log_paths: pa.ChunkedArray
    sizes: pa.ChunkedArray
    stats: pa.ChunkedArray
    load: Callable[[np.ndarray | None], DataFiles]


@dataclass(frozen=True)
class _Layout:
    """The data manifests of the version built last: each bucket's manifest and the log
    paths of its files."""

    version: int
    columns: tuple[StatsColumn, ...]
    count: int
    members: dict[int, pa.Array]
    manifests: dict[int, ManifestInfo]


def bucket_count(files: int) -> int:
    count = 1
    while count * FILES_PER_MANIFEST < files:
        count *= 2
    return count


class ManifestStore:
    """The manifests of one table in ``directory``, indexed by content digest (the index
    is a JSON-lines file beside them, appended as manifests are written)."""

    def __init__(
        self,
        directory: Path,
        files: MetadataFiles,
        partition: list[PartitionColumn],
        spec_json: str,
        schema_json: str,
        format_version: int = 2,
    ) -> None:
        self.directory = directory
        self._files = files
        self._partition = partition
        self._spec_json = spec_json
        self._schema_json = schema_json
        self.format_version = format_version
        self._entry_json = manifest_entry_schema(partition, format_version)
        self._entry_schema = fastavro.parse_schema(self._entry_json)
        self._layout: _Layout | None = None
        self._list_schema = fastavro.parse_schema(manifest_list_schema(format_version))
        self._lock = threading.Lock()
        self._index = ManifestIndex(directory / MANIFEST_INDEX)

    @property
    def next_row_id(self) -> int:
        """The first row id no manifest of this table has taken (format version 3)."""
        return self._index.next_row_id

    @property
    def built_version(self) -> int | None:
        """The version whose data manifests were made last (in this process)."""
        return self._layout.version if self._layout else None

    def data_manifests(
        self,
        files: SnapshotFiles,
        columns: list[StatsColumn],
        version: int,
        count_rows: Callable[[str], int],
        changed: pa.Array | None = None,
    ) -> list[ManifestInfo]:
        """The data manifests of a snapshot at ``version``, written where new.

        ``changed``: the log paths of the files added or removed since the version built
        last (:attr:`built_version`); then only their buckets are cut again, and every
        other bucket keeps that version's manifest."""
        count = bucket_count(len(files.log_paths))
        before = self._layout
        found: dict[int, ManifestInfo] = {}
        members: dict[int, pa.Array] = {}
        rows = np.arange(len(files.log_paths))
        if (
            changed is not None
            and before is not None
            and before.columns == tuple(columns)
            and before.count == count
            and before.version < version
        ):
            touched = set(_bucket_of(changed, count).tolist())
            found = {b: m for b, m in before.manifests.items() if b not in touched}
            members = {b: p for b, p in before.members.items() if b not in touched}
            candidates = [changed, *(p for b, p in before.members.items() if b in touched)]
            wanted = pc.is_in(files.log_paths, value_set=pa.concat_arrays(candidates))
            rows = np.flatnonzero(wanted.to_numpy(zero_copy_only=False))
        cut = _cut(files.log_paths, rows, count)
        chosen = pa.array(cut.rows)
        paths = files.log_paths.take(chosen).combine_chunks()
        stats = pc.fill_null(files.stats.take(chosen), "").combine_chunks()
        sizes = files.sizes.take(chosen).combine_chunks()
        missing: dict[int, tuple[str, np.ndarray]] = {}
        for bucket, (start, end) in cut.spans.items():
            members[bucket] = paths.slice(start, end - start)
            digest = self._digest(
                (paths.slice(start, end - start), stats.slice(start, end - start)),
                sizes.slice(start, end - start),
                columns,
            )
            known = self._index.get(digest)
            if known is not None and self._files.exists(name_in(known.path), remembered=False):
                found[bucket] = known
            else:
                missing[bucket] = (digest, cut.rows[start:end])
        if missing:
            found.update(self._write_data(files, missing, columns, version, count_rows))
        self._layout = _Layout(version, tuple(columns), count, members, found)
        return [found[b] for b in sorted(found)]

    def delete_manifests(
        self, files: DataFiles, version: int, storage: Storage
    ) -> list[ManifestInfo]:
        """The delete manifests of files' deletion vectors (``files``: those that have
        one), written where new."""
        plain = _DeleteFiles(
            files.paths.to_pylist(),
            files.sizes.to_pylist(),
            typed_partitions(files.partitions),
            files.deletion_vectors,
        )
        with_vectors = [i for i, dv in enumerate(plain.deletion_vectors) if dv is not None]
        out: list[ManifestInfo] = []
        for rows in _buckets(plain.paths, with_vectors):
            digest = self._delete_digest(plain, rows)
            found = self._index.get(digest)
            if found is None or not self._files.exists(name_in(found.path), remembered=False):
                found = self._write_deletes(digest, plain, rows, version, storage)
            out.append(found)
        return out

    def manifest_list(
        self, manifests: list[ManifestInfo], version: int, first_row_id: int | None = None
    ) -> str:
        """Write (once) the manifest list of the snapshot of ``version``; its path."""
        names = "\n".join(m.path for m in manifests)
        digest = hashlib.sha256(f"{version}\n{names}".encode()).hexdigest()[:24]
        name = f"snap-{version}-{digest}.avro"
        if not self._files.exists(name):
            metadata = {
                "snapshot-id": str(version + 1),
                "parent-snapshot-id": str(version) if version > 0 else "null",
                "sequence-number": str(version + 1),
                "format-version": str(self.format_version),
            }
            if first_row_id is not None:
                metadata["first-row-id"] = str(first_row_id)
            records = [m.list_record() for m in manifests]
            self._files.write(name, _avro(self._list_schema, records, metadata))
        return self._files.path(name)

    def _digest(
        self, texts: tuple[pa.Array, pa.Array], sizes: pa.Array, columns: list[StatsColumn]
    ) -> str:
        """The name of the data manifest of files by their log paths and stats
        (``texts``) and sizes, sorted by path, and the ``columns`` their metrics are taken
        for (a schema change changes what the entries hold)."""
        h = hashlib.sha256(f"{self.format_version}{self._spec_json}{columns}".encode())
        for values in texts:
            h.update(np.asarray(pc.binary_length(values)).tobytes())
            h.update(concatenated(values))
        h.update(np.asarray(sizes).tobytes())
        return h.hexdigest()[:32]

    def _delete_digest(self, files: _DeleteFiles, rows: list[int]) -> str:
        h = hashlib.sha256(f"{self.format_version}True{self._spec_json}".encode())
        for row in rows:
            dv = files.deletion_vectors[row]
            h.update(f"\0{files.paths[row]}\0{files.sizes[row]}".encode())
            h.update(f"\0{dv.unique_id if dv else ''}".encode())
        return h.hexdigest()[:32]

    def _write_data(
        self,
        files: SnapshotFiles,
        missing: dict[int, tuple[str, np.ndarray]],
        columns: list[StatsColumn],
        version: int,
        count_rows: Callable[[str], int],
    ) -> dict[int, ManifestInfo]:
        """Write the manifests of the ``missing`` buckets (digest and rows of each), the
        entries of all of them encoded at once."""
        ordered = np.concatenate([r for _, r in missing.values()])
        rows = np.sort(ordered)
        chosen = files.load(None if len(rows) == len(files.log_paths) else rows)
        metrics = metric_columns(chosen.stats, columns)
        records = metrics.records.copy()
        for i in np.flatnonzero(records < 0).tolist():
            records[i] = count_rows(chosen.paths[i].as_py())
        entries = data_entries(
            EntryColumns(
                chosen.paths,
                chosen.sizes,
                records,
                metrics.value_counts,
                metrics.null_counts,
                metrics.lower_bounds,
                metrics.upper_bounds,
                [(p.iceberg_type, chosen.partitions[p.name]) for p in self._partition],
            ),
            self.format_version,
        )
        self.directory.mkdir(parents=True, exist_ok=True)
        head = header(self._entry_json, self._header("data"))
        placed = np.searchsorted(rows, ordered)
        entries, records = entries.take(pa.array(placed)), records[placed]
        out: dict[int, ManifestInfo] = {}
        at = 0
        for bucket, (digest, bucket_rows) in missing.items():
            part = slice(at, at + len(bucket_rows))
            at += len(bucket_rows)
            body = container(head, concatenated(entries[part]), len(bucket_rows))
            target = self._files.write(f"data-{digest}.avro", body)
            first_row_id = self.next_row_id if self.format_version >= 3 else None
            info = ManifestInfo(
                target,
                len(body),
                0,
                version + 1,
                version + 1,
                len(bucket_rows),
                int(records[part].sum()),
                first_row_id,
            )
            out[bucket] = info
            self._index.add(digest, info)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._index.record({missing[b][0]: info for b, info in out.items()})
        return out

    def _write_deletes(
        self, digest: str, files: _DeleteFiles, rows: list[int], version: int, storage: Storage
    ) -> ManifestInfo:
        vectors = []
        for row in rows:
            dv = files.deletion_vectors[row]
            assert dv is not None
            blob, cardinality = vector_blob(dv, storage)
            vectors.append((files.paths[row], blob, cardinality))
        puffin_bytes, placed = puffin_file(vectors)
        puffin = self._files.write(f"dv-{digest}.puffin", puffin_bytes)
        size = len(puffin_bytes)
        records: list[AvroRecord] = []
        for row, where in zip(rows, placed, strict=True):
            partition = {avro_name(p.name): files.partitions[p.name][row] for p in self._partition}
            records.append(
                {
                    "status": 1,
                    "snapshot_id": None,
                    "sequence_number": None,
                    "file_sequence_number": None,
                    "data_file": {
                        "content": 1,
                        "file_path": puffin,
                        "file_format": "PUFFIN",
                        "partition": partition,
                        "record_count": where.cardinality,
                        "file_size_in_bytes": size,
                        "referenced_data_file": where.referenced_data_file,
                        "content_offset": where.offset,
                        "content_size_in_bytes": where.length,
                    },
                }
            )
        data = _avro(self._entry_schema, records, self._header("deletes"))
        target = self._files.write(f"deletes-{digest}.avro", data)
        info = ManifestInfo(
            target,
            len(data),
            1,
            version + 1,
            version + 1,
            len(rows),
            sum(b.cardinality for b in placed),
        )
        self._index.add(digest, info)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._index.record({digest: info})
        return info

    def layout_manifests(self) -> list[str]:
        """The paths of the manifests the next version may keep (the last built's)."""
        layout = self._layout
        return [m.path for m in layout.manifests.values()] if layout else []

    def forget(self, removed: set[str]) -> None:
        """Drop the manifests named ``removed`` (removed by a cleanup) from the index, and
        the layout of the version built last when it holds one of them."""
        with self._lock:
            self._index.forget(removed)
            layout = self._layout
            if layout is not None and any(
                name_in(m.path) in removed for m in layout.manifests.values()
            ):
                self._layout = None

    def _header(self, content: str) -> dict[str, str]:
        return {
            "schema": self._schema_json,
            "schema-id": "0",
            "partition-spec": self._spec_json,
            "partition-spec-id": "0",
            "format-version": str(self.format_version),
            "content": content,
        }


def _buckets(paths: Sequence[str], rows: Sequence[int]) -> list[list[int]]:
    """``rows`` cut into buckets by a hash of their path, each sorted by path; empty
    buckets left out."""
    count = bucket_count(len(rows))
    buckets: list[list[int]] = [[] for _ in range(count)]
    for row in rows:
        buckets[zlib.crc32(paths[row].encode()) & (count - 1)].append(row)
    return [sorted(b, key=paths.__getitem__) for b in buckets if b]


@dataclass(frozen=True)
class _Cut:
    """Rows ordered by bucket, then by path, and where each bucket's run starts and ends."""

    rows: np.ndarray
    spans: dict[int, tuple[int, int]]


def _cut(log_paths: pa.ChunkedArray, rows: np.ndarray, count: int) -> _Cut:
    paths = log_paths if len(rows) == len(log_paths) else log_paths.take(pa.array(rows))
    buckets = _bucket_of(paths, count)
    by_path = pc.sort_indices(paths).to_numpy()
    order = by_path[np.argsort(buckets[by_path], kind="stable")]
    ordered = buckets[order]
    cuts = [0, *(np.flatnonzero(np.diff(ordered)) + 1).tolist(), len(order)]
    spans = {int(ordered[a]): (a, b) for a, b in pairwise(cuts) if b > a}
    return _Cut(rows[order], spans)


def _bucket_of(log_paths: pa.Array | pa.ChunkedArray, count: int) -> np.ndarray:
    """The bucket of each path: a CRC-32 of it modulo the (power of two) bucket count."""
    raw = log_paths.cast(pa.binary()).to_pylist()
    return np.fromiter(map(zlib.crc32, raw), np.int64, len(raw)) & (count - 1)


def _avro(schema: Schema, records: list[AvroRecord], meta: dict[str, str]) -> bytes:
    """An Avro file's bytes (written whole by :class:`MetadataFiles`: a reader never opens
    half a manifest)."""
    out = io.BytesIO()
    fastavro.writer(out, schema, records, metadata=meta, codec="deflate")
    return out.getvalue()


def typed_partitions(values: Mapping[str, pa.Array]) -> dict[str, list[object]]:
    """Partition columns as the Python values the Avro writer takes (dates as days and
    timestamps as microseconds, so no time zone is guessed)."""
    out: dict[str, list[object]] = {}
    for name, array in values.items():
        if pa.types.is_date32(array.type):
            array = array.cast(pa.int32())
        elif pa.types.is_timestamp(array.type):
            array = array.cast(pa.timestamp("us", tz=array.type.tz)).cast(pa.int64())
        elif pa.types.is_integer(array.type) and array.type.bit_width < 32:
            array = array.cast(pa.int32())
        out[name] = array.to_pylist()
    return out
