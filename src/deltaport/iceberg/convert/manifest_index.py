"""A table's manifests by content digest, as manifest lists name them, kept in a JSON-lines
file beside the table's other bookkeeping (appended as manifests are written, rewritten
without the manifests a cleanup removed)."""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass
from pathlib import Path

from deltaport.iceberg.avro.container import AvroRecord
from deltaport.iceberg.convert.cleanup import rewrite_lines
from deltaport.iceberg.convert.files import append_whole, name_in

MANIFEST_INDEX = "manifests.jsonl"


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

    def list_record(self) -> AvroRecord:
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


class ManifestIndex:
    """The manifests written for one table, by digest."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._by_digest: dict[str, ManifestInfo] = {}
        if path.exists():
            for line in path.read_text().splitlines():
                if line.strip():
                    item = json.loads(line)
                    digest = item.pop("digest")
                    self._by_digest[digest] = ManifestInfo(**item)

    def get(self, digest: str) -> ManifestInfo | None:
        return self._by_digest.get(digest)

    @property
    def next_row_id(self) -> int:
        """The first row id no data manifest has taken (format version 3)."""
        holder = self._row_id_holder()
        return (holder.first_row_id or 0) + holder.rows if holder else 0

    def add(self, digest: str, info: ManifestInfo) -> None:
        with self._lock:
            self._by_digest[digest] = info

    def record(self, written: dict[str, ManifestInfo]) -> None:
        """Append manifests just written to the file (after the files themselves)."""
        lines = "".join(json.dumps({"digest": d, **asdict(i)}) + "\n" for d, i in written.items())
        with self._lock:
            append_whole(self._path, lines)

    def forget(self, removed: set[str]) -> None:
        """Drop the manifests whose file names are in ``removed``, except the one holding
        the highest row id (so that row ids are never handed out twice)."""
        with self._lock:
            holder = self._row_id_holder()
            kept = {
                d: m
                for d, m in self._by_digest.items()
                if name_in(m.path) not in removed or m == holder
            }
            self._by_digest = kept
            digests = set(kept)
            rewrite_lines(self._path, lambda line: json.loads(line)["digest"] in digests)

    def _row_id_holder(self) -> ManifestInfo | None:
        data = [m for m in self._by_digest.values() if m.content == 0]
        return max(data, key=lambda m: (m.first_row_id or 0) + m.rows, default=None)


def forget_manifests(path: Path, removed: set[str]) -> None:
    """:meth:`ManifestIndex.forget` on the index file at ``path``."""
    ManifestIndex(path).forget(removed)
