"""Data manifests and manifest lists of one table, written once and reused.

A snapshot's files are cut into buckets by a hash of their path (about
[`FILES_PER_MANIFEST`][] files each, the number of buckets a power of two), and each bucket
is one manifest named by a digest of what it holds. A new Delta version only writes the
manifests of the buckets its commit touched; every other manifest of the previous version
is found under its name and reused, so the cost of a version follows its change, not the
table's size.
"""

from __future__ import annotations

import hashlib
import io
import json
import threading
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa

from deltaport.delta.model import DeletionVector
from deltaport.iceberg.avro_schemas import avro_name, manifest_entry_schema, manifest_list_schema
from deltaport.iceberg.bounds import StatsColumn, file_metrics, iter_bounds
from deltaport.iceberg.deletion_vectors import puffin_file, vector_blob
from deltaport.iceberg.files import MetadataFiles, name_in
from deltaport.storage import Storage

FILES_PER_MANIFEST = 2048


@dataclass(frozen=True)
class ManifestInfo:
    """One written manifest, as a manifest list names it."""

    path: str
    length: int
    content: int
    sequence_number: int
    snapshot_id: int
    files: int
    rows: int
    first_row_id: int | None = None

    def list_record(self) -> dict[str, Any]:
        return {
            "first_row_id": self.first_row_id,
            "manifest_path": self.path,
            "manifest_length": self.length,
            "partition_spec_id": 0,
            "content": self.content,
            "sequence_number": self.sequence_number,
            "min_sequence_number": 0 if self.content == 0 else self.sequence_number,
            "added_snapshot_id": self.snapshot_id,
            "added_files_count": self.files,
            "existing_files_count": 0,
            "deleted_files_count": 0,
            "added_rows_count": self.rows,
            "existing_rows_count": 0,
            "deleted_rows_count": 0,
            "partitions": None,
            "key_metadata": None,
        }


@dataclass(frozen=True)
class DataFiles:
    """What a manifest needs of a snapshot's files: paths as readers open them, sizes, stats
    and typed partition values (one list per partition field), row by row."""

    paths: Sequence[str]
    sizes: Sequence[int]
    stats: Sequence[str | None]
    partitions: Mapping[str, Sequence[Any]]
    deletion_vectors: Sequence[DeletionVector | None] = ()
    """Each file's deletion vector (empty: none has one)."""


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
        partition: list[dict[str, Any]],
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
        self._entry_schema = fastavro.parse_schema(manifest_entry_schema(partition, format_version))
        self._list_schema = fastavro.parse_schema(manifest_list_schema(format_version))
        self._lock = threading.Lock()
        self._index: dict[str, ManifestInfo] = {}
        self._index_path = directory / "manifests.jsonl"
        if self._index_path.exists():
            for line in self._index_path.read_text().splitlines():
                if line.strip():
                    item = json.loads(line)
                    self._index[item.pop("digest")] = ManifestInfo(**item)

    @property
    def next_row_id(self) -> int:
        """The first row id no manifest of this table has taken (format version 3)."""
        return max(
            ((m.first_row_id or 0) + m.rows for m in self._index.values() if m.content == 0),
            default=0,
        )

    def data_manifests(
        self,
        files: DataFiles,
        columns: list[StatsColumn],
        version: int,
        count_rows: Callable[[str], int],
    ) -> list[ManifestInfo]:
        """The data manifests of a snapshot at ``version``, written where new."""
        out: list[ManifestInfo] = []
        for rows in _buckets(files.paths, range(len(files.paths))):
            digest = self._digest(files, rows, deletes=False)
            found = self._index.get(digest)
            if found is None or not self._files.exists(name_in(found.path)):
                found = self._write_data(digest, files, rows, columns, version, count_rows)
            out.append(found)
        return out

    def delete_manifests(
        self, files: DataFiles, version: int, storage: Storage
    ) -> list[ManifestInfo]:
        """The delete manifests of a snapshot's deletion vectors, written where new."""
        with_vectors = [i for i, dv in enumerate(files.deletion_vectors) if dv is not None]
        out: list[ManifestInfo] = []
        for rows in _buckets(files.paths, with_vectors):
            digest = self._digest(files, rows, deletes=True)
            found = self._index.get(digest)
            if found is None or not self._files.exists(name_in(found.path)):
                found = self._write_deletes(digest, files, rows, version, storage)
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

    def _digest(self, files: DataFiles, rows: list[int], *, deletes: bool) -> str:
        h = hashlib.sha256(f"{self.format_version}{deletes}{self._spec_json}".encode())
        for row in rows:
            h.update(f"\0{files.paths[row]}\0{files.sizes[row]}".encode())
            if deletes:
                dv = files.deletion_vectors[row]
                h.update(f"\0{dv.unique_id if dv else ''}".encode())
        return h.hexdigest()[:32]

    def _write_data(
        self,
        digest: str,
        files: DataFiles,
        rows: list[int],
        columns: list[StatsColumn],
        version: int,
        count_rows: Callable[[str], int],
    ) -> ManifestInfo:
        records = []
        total = 0
        for row in rows:
            path = files.paths[row]
            count, metrics = file_metrics(files.stats[row], columns)
            if count < 0:
                count = count_rows(path)
            total += count
            partition = {
                avro_name(p["name"]): files.partitions[p["name"]][row] for p in self._partition
            }
            records.append(
                {
                    "status": 1,
                    "snapshot_id": None,
                    "sequence_number": 0,
                    "file_sequence_number": 0,
                    "data_file": {
                        "content": 0,
                        "file_path": path,
                        "file_format": "PARQUET",
                        "partition": partition,
                        "record_count": count,
                        "file_size_in_bytes": files.sizes[row],
                        "value_counts": _counts(metrics.value_counts),
                        "null_value_counts": _counts(metrics.null_counts),
                        "lower_bounds": list(iter_bounds(metrics.lower_bounds)) or None,
                        "upper_bounds": list(iter_bounds(metrics.upper_bounds)) or None,
                    },
                }
            )
        data = _avro(self._entry_schema, records, self._header("data"))
        target = self._files.write(f"data-{digest}.avro", data)
        first_row_id = self.next_row_id if self.format_version >= 3 else None
        info = ManifestInfo(
            target,
            len(data),
            0,
            version + 1,
            version + 1,
            len(rows),
            total,
            first_row_id,
        )
        return self._indexed(digest, info)

    def _write_deletes(
        self, digest: str, files: DataFiles, rows: list[int], version: int, storage: Storage
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
        records = []
        for row, where in zip(rows, placed, strict=True):
            partition = {
                avro_name(p["name"]): files.partitions[p["name"]][row] for p in self._partition
            }
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
        return self._indexed(digest, info)

    def _header(self, content: str) -> dict[str, str]:
        return {
            "schema": self._schema_json,
            "schema-id": "0",
            "partition-spec": self._spec_json,
            "partition-spec-id": "0",
            "format-version": str(self.format_version),
            "content": content,
        }

    def _indexed(self, digest: str, info: ManifestInfo) -> ManifestInfo:
        with self._lock:
            self._index[digest] = info
            self.directory.mkdir(parents=True, exist_ok=True)
            with self._index_path.open("a") as index:
                index.write(json.dumps({"digest": digest, **asdict(info)}) + "\n")
        return info


def _buckets(paths: Sequence[str], rows: Sequence[int]) -> list[list[int]]:
    """``rows`` cut into buckets by a hash of their path, each sorted by path; empty
    buckets left out."""
    count = bucket_count(len(rows))
    buckets: list[list[int]] = [[] for _ in range(count)]
    for row in rows:
        buckets[zlib.crc32(paths[row].encode()) & (count - 1)].append(row)
    return [sorted(b, key=paths.__getitem__) for b in buckets if b]


def _counts(values: dict[int, int]) -> list[dict[str, int]] | None:
    return [{"key": k, "value": v} for k, v in values.items()] or None


def _avro(schema: Any, records: list[dict[str, Any]], meta: dict[str, str]) -> bytes:
    """An Avro file's bytes (written whole by :class:`MetadataFiles`: a reader never opens
    half a manifest)."""
    out = io.BytesIO()
    fastavro.writer(out, schema, records, metadata=meta, codec="deflate")
    return out.getvalue()


def typed_partitions(values: dict[str, pa.Array]) -> dict[str, list[Any]]:
    """Partition columns as the Python values the Avro writer takes (dates as days and
    timestamps as microseconds, so no time zone is guessed)."""
    out: dict[str, list[Any]] = {}
    for name, array in values.items():
        if pa.types.is_date32(array.type):
            array = array.cast(pa.int32())
        elif pa.types.is_timestamp(array.type):
            array = array.cast(pa.timestamp("us", tz=array.type.tz)).cast(pa.int64())
        elif pa.types.is_integer(array.type) and array.type.bit_width < 32:
            array = array.cast(pa.int32())
        out[name] = array.to_pylist()
    return out
