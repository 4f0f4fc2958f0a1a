"""Log replay: reconcile add/remove actions into the active file set, vectorised.

A logical file is identified by (path, deletion-vector unique id). The newest action
for an id wins; an id whose newest action is an add is active. Base files (from a
checkpoint or an earlier snapshot) survive unless a later commit touched their id.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from deltaport.delta.commits import Commit, file_actions_table

_MAX_SLICED_DROPS = 64
_MAX_CHUNKS = 256


def file_keys(files: pa.Table) -> pa.Array:
    """The replay id of each row: path, NUL, then the DV unique id (empty without a DV)."""
    dv = files.column("deletion_vector").combine_chunks()
    offset = pc.cast(dv.field("offset"), pa.string())
    dv_id = pc.binary_join_element_wise(
        pc.fill_null(dv.field("storageType"), ""),
        pc.fill_null(dv.field("pathOrInlineDv"), ""),
        pc.fill_null(pc.binary_join_element_wise("@", offset, ""), ""),
        "",
    )
    dv_id = pc.if_else(dv.is_valid(), dv_id, "")
    path = files.column("path").combine_chunks()
    return pc.binary_join_element_wise(path, dv_id, "\x00")


def apply_commits(base: pa.Table, commits: Sequence[Commit]) -> pa.Table:
    """The active files after applying ``commits`` (ascending) on top of ``base``."""
    kinds: list[bool] = []
    actions = []
    for commit in commits:
        for kind, action in commit.file_actions:
            if kind != "cdc":
                kinds.append(kind == "add")
                actions.append(action)
    if not actions:
        return base
    touched = file_actions_table(actions)
    is_add = pa.array(kinds, pa.bool_())
    keys = file_keys(touched)
    newest_first = pa.array(range(len(actions) - 1, -1, -1), pa.int64())
    reversed_keys = keys.take(newest_first)
    unique = pc.unique(reversed_keys)
    last = newest_first.take(pc.index_in(unique, value_set=reversed_keys))
    last = last.take(pc.sort_indices(last))
    winners = pc.filter(last, is_add.take(last))
    kept = _without_rows(base, _touched_rows(base, touched.column("path"), unique))
    added = touched.take(winners)
    files = pa.concat_tables([kept, added])
    if files.column("path").num_chunks > _MAX_CHUNKS:
        files = files.combine_chunks()
    return files


def _touched_rows(
    base: pa.Table, touched_paths: pa.ChunkedArray, touched_keys: pa.Array
) -> list[int]:
    """Row numbers of base files whose id a commit touched; full ids are built only for
    rows sharing a path with a touched file, so a large base costs one hash lookup a row.

    An empty base (the first commit's) touches nothing; it is answered before any compute
    call, as ``indices_nonzero`` on a column of zero chunks crashes pyarrow 16 to 23."""
    if base.num_rows == 0:
        return []
    same_path = pc.is_in(base.column("path"), value_set=pc.unique(touched_paths))
    candidates = pc.indices_nonzero(same_path)
    if len(candidates) == 0:
        return []
    id_columns = base.select(["path", "deletion_vector"]).take(candidates)
    hit = pc.is_in(file_keys(id_columns), value_set=touched_keys)
    return [int(i) for i in candidates.filter(hit).to_pylist()]


def _without_rows(base: pa.Table, rows: list[int]) -> pa.Table:
    """``base`` minus ``rows``: zero-copy slices around a few rows, a filter for many."""
    if not rows:
        return base
    if len(rows) > _MAX_SLICED_DROPS:
        mask = np.ones(base.num_rows, dtype=bool)
        mask[rows] = False
        return base.filter(pa.array(mask))
    pieces, start = [], 0
    for row in sorted(rows):
        pieces.append(base.slice(start, row - start))
        start = row + 1
    pieces.append(base.slice(start))
    return pa.concat_tables(pieces)
