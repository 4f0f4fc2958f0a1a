"""Which files a row diff reads: only those one side has and the other has not.

Two copies of a table that share history (a common base version, found as the history
diff finds it) hold the very same files for everything written up to that base, and new
files get fresh names. A file that both snapshots list with the same path, size and
deletion vector therefore holds the same rows on both sides, and those rows cancel: only
the files added or removed on either side since the base are read. A file whose deletion
vector changed is read on both sides, and its unchanged rows cancel in the comparison.

When the histories do not connect, every file of both sides is read (a full comparison),
and the result says so. A side may also be a table shared with the caller
(``deltaport.diff.rows.shared_side``); two versions of one shared table connect.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

import pyarrow as pa
import pyarrow.compute as pc

from deltaport.delta import DeltaTable, Snapshot, open_table
from deltaport.delta.errors import TableNotFoundError
from deltaport.delta.model import Metadata
from deltaport.diff.base.errors import TablesNotFoundError
from deltaport.diff.history.commit_log import Commit, align
from deltaport.diff.rows.shared_side import SharedRowSide, is_shared_table_url, shared_side
from deltaport.protocol.predicates import Expr
from deltaport.read.file_selection import matching_files
from deltaport.storage import Storage

FULL_COMPARISON_NOTE = (
    "The histories of the two tables do not connect (no common version): every row of "
    "both tables was compared."
)


@dataclass(frozen=True)
class RowSide:
    """One side of a row diff: the snapshot, and the files of it that are read."""

    uri: str
    snapshot: Snapshot
    files: pa.Table
    storage: Storage

    @property
    def version(self) -> int:
        return self.snapshot.version

    @property
    def metadata(self) -> Metadata:
        return self.snapshot.metadata


AnySide = RowSide | SharedRowSide


@dataclass(frozen=True)
class RowDiffInput:
    left: AnySide
    right: AnySide
    base_version: int | None
    notes: tuple[str, ...]

    @property
    def full_comparison(self) -> bool:
        return self.base_version is None


def row_diff_input(
    left_uri: str,
    right_uri: str,
    *,
    left_version: int | None = None,
    right_version: int | None = None,
    where: Expr | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> RowDiffInput:
    """Both sides, their common base version and the files each side must read."""
    left = _side(left_uri, left_version, storage_options)
    right = _side(right_uri, right_version, storage_options)
    base = _common_version(left, right)
    notes: list[str] = []
    if base is None:
        notes.append(FULL_COMPARISON_NOTE)
    else:
        left_ids, right_ids = _identities(left), _identities(right)
        left = replace(left, files=left.files.filter(pc.invert(pc.is_in(left_ids, right_ids))))
        right = replace(right, files=right.files.filter(pc.invert(pc.is_in(right_ids, left_ids))))
    if where is not None:
        left = replace(left, files=_prune(left.files, left.metadata, where))
        right = replace(right, files=_prune(right.files, right.metadata, where))
    return RowDiffInput(left, right, base, tuple(notes))


def _side(uri: str, version: int | None, options: Mapping[str, str] | None) -> AnySide:
    if is_shared_table_url(uri):
        return shared_side(uri, version)
    table = open_table(uri, options)
    snapshot = _snapshot(table, version, uri)
    return RowSide(uri, snapshot, snapshot.files, table.storage)


def _common_version(left: AnySide, right: AnySide) -> int | None:
    """The version both sides share, None when their histories do not connect."""
    if isinstance(left, SharedRowSide) and isinstance(right, SharedRowSide):
        return min(left.version, right.version) if left.same_table(right) else None
    if isinstance(left, RowSide) and isinstance(right, RowSide):
        left_table = open_table(left.uri, left.storage.options)
        right_table = open_table(right.uri, right.storage.options)
        return align(
            _history(left_table, left.version), _history(right_table, right.version)
        ).base_version
    return None


def _identities(side: AnySide) -> pa.Array:
    if isinstance(side, SharedRowSide):
        return side.identities()
    return _file_identities(side.files)


def _snapshot(table: DeltaTable, version: int | None, uri: str) -> Snapshot:
    try:
        return table.snapshot(version)
    except TableNotFoundError:
        raise TablesNotFoundError(f"no Delta table at {uri}") from None


def _history(table: DeltaTable, version: int) -> list[Commit]:
    entries = table.history(end=version)
    return sorted(
        (Commit(e.version, e.timestamp, e.commit_info) for e in entries), key=lambda c: c.version
    )


def _file_identities(files: pa.Table) -> pa.Array:
    """Path, size and deletion vector of each file as one string: equal on both sides only
    for the same file with the same rows deleted."""
    dv = files.column("deletion_vector").combine_chunks()
    parts = [
        files.column("path").combine_chunks(),
        pc.cast(files.column("size").combine_chunks(), pa.string()),
    ]
    for name in ("storageType", "pathOrInlineDv", "offset", "cardinality"):
        field = pc.struct_field(dv, name)
        parts.append(pc.fill_null(pc.cast(field, pa.string()), ""))
    return pc.binary_join_element_wise(*parts, "\0")


def _prune(files: pa.Table, metadata: Metadata, where: Expr) -> pa.Table:
    """The files whose stats or partition values allow a row matching ``where``."""
    try:
        return matching_files(files, metadata, where)
    except Exception:
        return files  # a filter the stats cannot decide keeps every file
