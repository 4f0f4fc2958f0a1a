"""Per-snapshot pieces of answer lines, built once and shared by later requests.

Everything in a file line except its URL and expiry depends only on the snapshot: the id
(:mod:`deltaport.server.answers.file_ids`), partition values, size, stats, ... and, for local
tables, the path digest and URL path a signed URL is made of. :class:`PreparedSnapshot`
builds these per format on first use; :class:`SnapshotCache` keeps the prepared snapshots
of recent (table, version) pairs, so a repeated request only signs and joins. A first
request for every file builds the pieces block by block while its answer streams, then
hands them over with :meth:`PreparedSnapshot.adopt`: its first lines leave without waiting
for all pieces.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from deltaport.catalog.model import SharedTable
from deltaport.delta import Snapshot
from deltaport.delta.cache import TABLE_BUDGET, MemoryBudget
from deltaport.observe.metrics import count_snapshot_lookup
from deltaport.protocol.capabilities import DELTA
from deltaport.server.answers.file_ids import file_ids, hashed_file_ids
from deltaport.server.answers.line_encoding import (
    Pieces,
    joined,
    json_map_pieces,
    json_maps,
    json_strings,
    json_values,
    optional_member,
    optional_string_member_pieces,
)
from deltaport.server.answers.lines import dv_log_path
from deltaport.server.files.signing import SignableFiles, UrlSigner, join_signable
from deltaport.storage.cmac import CmacMessages

ROW_COLUMN = "_row"
"""Column appended to a prepared snapshot's files: the row number in the snapshot, which
survives filtering and paging and indexes the prepared pieces."""

SNAPSHOTS_KEPT = 4

WHOLE_SNAPSHOT_LIMIT = 200_000
"""Snapshots with more files than this are not prepared as a whole (about 0.8 KB a file):
their pieces are built slice by slice, so serving a huge table stays within bounded memory."""

T = TypeVar("T")


@dataclass(frozen=True)
class DeltaPieces:
    """A delta-format line is ``head + URL + middle + DV URL + tail`` (then the suffix);
    ``dv_paths`` holds the log path of file-backed deletion vectors (None: none at all)."""

    head: pa.Array
    middle: pa.Array
    tail: pa.Array
    dv_paths: pa.Array | None


class PreparedSnapshot:
    """A snapshot's files with :data:`ROW_COLUMN`, and their line pieces (built lazily).

    ``files`` limits it to some of the snapshot's files (one slice of a huge answer);
    ``whole`` says whether the pieces may be built for every file of the snapshot;
    ``id_scheme`` the ``fileidhash`` scheme of its file ids (None: deltaport's own).
    """

    def __init__(
        self,
        table: SharedTable,
        snapshot: Snapshot,
        signer: UrlSigner,
        files: pa.Table | None = None,
        id_scheme: str | None = None,
    ) -> None:
        self.snapshot = snapshot
        self.id_scheme = id_scheme
        self._source = snapshot.files if files is None else files
        self.whole = files is None and snapshot.files.num_rows <= WHOLE_SNAPSHOT_LIMIT
        rows = np.arange(self._source.num_rows, dtype=np.int64)
        self.files = self._source.append_column(ROW_COLUMN, pa.array(rows))
        self._table = table
        self._signer = signer
        self._lock = threading.RLock()  # builders share pieces (ids) through _once
        self._built: dict[str, object] = {}
        self._parts: list[PreparedSnapshot] | None = None

    @property
    def signable(self) -> SignableFiles:
        return self._once("signable", self._build_signable)

    @property
    def unservable(self) -> dict[int, Exception]:
        """The rows whose path can never be signed (see :meth:`UrlSigner.unservable`)."""
        return self._once("unservable", self._build_unservable)

    def unservable_among(self, rows: pa.Array) -> Exception | None:
        """Why one of ``rows`` (of :attr:`files`) cannot be served, if one cannot."""
        bad = self.unservable
        if not bad:
            return None
        hits = pc.is_in(rows, pa.array(sorted(bad), rows.type))
        first = pc.index(hits, True).as_py()
        return None if first < 0 else bad[rows[first].as_py()]

    @property
    def parquet(self) -> Pieces:
        """What follows the URL in a parquet-format line, up to the suffix: pieces joined
        with the URL in one pass (joining them here first would copy them twice)."""
        return self._once("parquet", self._build_parquet)

    @property
    def delta(self) -> DeltaPieces:
        return self._once("delta", self._build_delta)

    def build(self, response_format: str) -> None:
        """Build the pieces of ``response_format`` lines now. The file ids and the URL
        signatures are both CMACs of the paths: the paths are laid out for them once."""
        with self._lock:
            both = "ids" not in self._built and "signable" not in self._built
        if both and self.id_scheme is None:
            paths = self._column("path")
            messages = CmacMessages(paths)
            self._once("ids", lambda: file_ids(messages))
            self._once("signable", lambda: self._signer.prepare(self._table, paths, messages))
        self._once("signable", self._build_signable)
        if response_format == DELTA:
            self._once("delta", self._build_delta)
        else:
            self._once("parquet", self._build_parquet)

    def built(self, response_format: str) -> bool:
        """Whether the pieces of ``response_format`` lines are built (for every file)."""
        with self._lock:
            parts = self._parts
            return response_format in self._built or (
                parts is not None and all(response_format in part._built for part in parts)
            )

    def adopt(self, parts: Sequence[PreparedSnapshot]) -> None:
        """Take over the pieces built by ``parts``: subsets covering all files, in order.
        They are joined into whole pieces when first used (joining copies them all)."""
        if not parts or sum(part.files.num_rows for part in parts) != self.files.num_rows:
            raise ValueError("the parts do not cover the snapshot")
        with self._lock:
            self._parts = list(parts)

    def _once(self, name: str, build: Callable[[], T]) -> T:
        with self._lock:
            if name not in self._built:
                pieces = [part._built.get(name) for part in self._parts or ()]
                if pieces and all(p is not None for p in pieces):
                    lengths = [part.files.num_rows for part in self._parts or ()]
                    self._built[name] = _joined_pieces(name, pieces, lengths)
                else:
                    self._built[name] = build()
            return self._built[name]  # type: ignore[return-value]

    def _column(self, name: str) -> pa.Array:
        return self._source.column(name).combine_chunks()

    def subset(self, files: pa.Table) -> PreparedSnapshot:
        """A preparation of just ``files`` (rows of :attr:`files`), renumbered from 0."""
        return PreparedSnapshot(
            self._table,
            self.snapshot,
            self._signer,
            files.drop_columns([ROW_COLUMN]),
            self.id_scheme,
        )

    def _ids(self) -> pa.Array:
        return self._once("ids", lambda: hashed_file_ids(self._column("path"), self.id_scheme))

    def _build_unservable(self) -> dict[int, Exception]:
        return self._signer.unservable(self._table, self._column("path"))

    def _build_signable(self) -> SignableFiles:
        return self._signer.prepare(self._table, self._column("path"))

    def _partitions_and_size(self) -> Pieces:
        """The partition values and size members."""
        return (
            ',"partitionValues":',
            *json_map_pieces(self._column("partition_values")),
            ',"size":',
            pc.fill_null(json_values(self._column("size")), "null"),
        )

    def _stats(self) -> Pieces:
        """The optional stats member."""
        return optional_string_member_pieces("stats", self._column("stats"))

    def _build_parquet(self) -> Pieces:
        return (',"id":"', self._ids(), '"', *self._partitions_and_size(), *self._stats())

    def _build_delta(self) -> DeltaPieces:
        modified = pc.fill_null(json_values(self._column("modification_time")), "null")
        data_change = json_values(pc.fill_null(self._column("data_change"), True))
        tags = self._column("tags")
        tag_count = pc.subtract(tags.offsets.slice(1), tags.offsets.slice(0, len(tags)))
        has_tags = pc.fill_null(pc.and_(tags.is_valid(), pc.greater(tag_count, 0)), False)
        tags_member = pc.if_else(has_tags, optional_member("tags", json_maps(tags)), "")
        dv_head, dv_tail, dv_paths = self._deletion_vectors()
        head = joined(['{"file":{"id":"', self._ids(), '","deltaSingleAction":{"add":{"path":'])
        middle = joined(
            [
                *self._partitions_and_size(),
                ',"modificationTime":',
                modified,
                ',"dataChange":',
                data_change,
                *self._stats(),
                tags_member,
                dv_head,
            ]
        )
        row_ids = optional_member("baseRowId", json_values(self._column("base_row_id")))
        commit_versions = optional_member(
            "defaultRowCommitVersion", json_values(self._column("default_row_commit_version"))
        )
        tail = joined([dv_tail, row_ids, commit_versions, "}}"])
        return DeltaPieces(head, middle, tail, dv_paths)

    def _deletion_vectors(self) -> tuple[pa.Array | str, pa.Array | str, pa.Array | None]:
        """The DV member around its URL: file-backed DVs get ``storageType`` ``p`` and a
        signed URL as ``pathOrInlineDv``; inline ones are kept as they are."""
        dvs = self._column("deletion_vector")
        if dvs.null_count == len(dvs):
            return "", "", None
        present = dvs.is_valid()
        kind, path_or_inline, offset, size, cardinality = dvs.flatten()
        file_backed = pc.fill_null(pc.and_(present, pc.is_in(kind, pa.array(["u", "p"]))), False)
        storage_type = pc.if_else(file_backed, '"p"', pc.fill_null(json_strings(kind), "null"))
        inline = pc.if_else(file_backed, "", pc.fill_null(json_strings(path_or_inline), "null"))
        opening = ',"deletionVector":{"storageType":'
        head = joined([opening, storage_type, ',"pathOrInlineDv":', inline])
        tail = joined(
            [
                ',"sizeInBytes":',
                pc.fill_null(json_values(size), "null"),
                ',"cardinality":',
                pc.fill_null(json_values(cardinality), "null"),
                optional_member("offset", json_values(offset)),
                "}",
            ]
        )
        rows = pc.indices_nonzero(file_backed).to_pylist()
        paths: list[str | None] = [None] * len(dvs)
        for row, dv in zip(rows, dvs.take(rows).to_pylist(), strict=True):
            paths[row] = dv_log_path(dv)
        return (
            pc.if_else(present, head, ""),
            pc.if_else(present, tail, ""),
            pa.array(paths, pa.string()) if rows else None,
        )


def _joined_pieces(name: str, pieces: list[Any], lengths: list[int]) -> object:
    """The pieces ``name`` of consecutive parts of ``lengths`` files, as one."""
    if name == "signable":
        return join_signable(pieces, lengths)
    if name == "delta":
        return _join_delta(pieces, lengths)
    if name == "parquet":
        return _concatenated_pieces(pieces)
    return pa.concat_arrays(pieces)


def _concatenated_pieces(parts: list[Pieces]) -> Pieces:
    """The pieces of consecutive parts as the pieces of all their rows: column by column
    when the parts have the same constants in the same places; else each part joined into
    one column first (parts whose maps or nulls took different shapes)."""
    shape = _constants(parts[0])
    if any(_constants(part) != shape for part in parts):
        return (pa.concat_arrays([joined(part) for part in parts]),)
    out: list[pa.Array | str] = []
    for i, constant in enumerate(shape):
        columns = [part[i] for part in parts]
        out.append(constant if constant is not None else pa.concat_arrays(columns))
    return tuple(out)


def _constants(pieces: Pieces) -> list[str | None]:
    """The constant text of each piece (None for columns)."""
    return [piece if isinstance(piece, str) else None for piece in pieces]


def _join_delta(pieces: list[DeltaPieces], lengths: list[int]) -> DeltaPieces:
    dv_paths = None
    if any(p.dv_paths is not None for p in pieces):
        dv_paths = pa.concat_arrays(
            [
                pa.nulls(n, pa.string()) if p.dv_paths is None else p.dv_paths
                for p, n in zip(pieces, lengths, strict=True)
            ]
        )
    return DeltaPieces(
        pa.concat_arrays([p.head for p in pieces]),
        pa.concat_arrays([p.middle for p in pieces]),
        pa.concat_arrays([p.tail for p in pieces]),
        dv_paths,
    )


class SnapshotCache:
    """The prepared snapshots of the last :data:`SNAPSHOTS_KEPT` (table, version) pairs.

    An entry is reused only for the very snapshot object it was built from: when the
    engine replays the version again (its cache evicted it, or the table was replaced),
    the pieces are rebuilt. Each ``fileidhash`` scheme has its own entry. Entries count
    against ``budget`` (the process's one), estimated at the size of the snapshot's file
    table: the pieces hold about as much.
    """

    def __init__(
        self, signer: UrlSigner, size: int = SNAPSHOTS_KEPT, budget: MemoryBudget = TABLE_BUDGET
    ) -> None:
        self._signer = signer
        self._size = size
        self._budget = budget
        self._entries: OrderedDict[tuple[str, int, str | None], PreparedSnapshot] = OrderedDict()
        self._lock = threading.Lock()

    def prepared(
        self, table: SharedTable, snapshot: Snapshot, id_scheme: str | None = None
    ) -> PreparedSnapshot:
        key = (table.key, snapshot.version, id_scheme)
        with self._lock:
            entry = self._entries.get(key)
            hit = entry is not None and entry.snapshot is snapshot
            count_snapshot_lookup(hit)
            if entry is not None and hit:
                self._entries.move_to_end(key)
                self._budget.touch(("prepared", id(self), key))
                return entry
            entry = PreparedSnapshot(table, snapshot, self._signer, id_scheme=id_scheme)
            if not entry.whole:
                return entry
            self._entries[key] = entry
            dropped = []
            while len(self._entries) > self._size:
                dropped.append(self._entries.popitem(last=False)[0])
        for old in dropped:
            self._budget.release(("prepared", id(self), old))
        self._budget.hold(
            ("prepared", id(self), key), snapshot.files.nbytes, lambda: self._forget(key, entry)
        )
        return entry

    def _forget(self, key: tuple[str, int, str | None], entry: PreparedSnapshot) -> None:
        """Drop ``entry`` (the budget's eviction), unless a newer one took its place."""
        with self._lock:
            if self._entries.get(key) is entry:
                del self._entries[key]
