"""Change-data-feed rows: which rows of each file are changes, and their change type.

``add`` files yield ``insert`` rows and ``remove`` files ``delete`` rows; ``cdc`` files
carry their own ``_change_type``. When one version removes and re-adds the same file with
a different deletion vector (a DELETE or a restore by DV), only the difference is a change:
the re-added file yields the rows its old DV deleted and its new one does not (inserts),
and the removed file the rows the new DV deletes and the old one did not (deletes).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

from deltaport.read.data_file import ChangeInfo, RowSelection
from deltaport.read.deletion_vectors import RowIndexes

_CHANGE_TYPES = {"add": "insert", "remove": "delete", "cdc": None}

DvLoader = Callable[[dict[str, Any] | None], RowIndexes | None]


def change_info(files: pa.Table, index: int) -> ChangeInfo:
    """The CDF columns of row ``index`` of a CHANGE_SCHEMA file table."""
    action = files.column("action")[index].as_py()
    if action not in _CHANGE_TYPES:
        raise ValueError(f"unknown file action {action!r} in a change table")
    return ChangeInfo(
        commit_version=files.column("version")[index].as_py(),
        commit_timestamp_ms=files.column("timestamp")[index].as_py(),
        change_type=_CHANGE_TYPES[action],
    )


def row_selections(files: pa.Table, load_dv: DvLoader) -> list[RowSelection]:
    """The rows of each file of a CHANGE_SCHEMA table that are changes."""
    versions = files.column("version").to_pylist()
    actions = files.column("action").to_pylist()
    paths = files.column("path").to_pylist()
    dvs = files.column("deletion_vector").to_pylist()
    by_key: dict[tuple[int, str, str], int] = {}
    for i, (version, action, path) in enumerate(zip(versions, actions, paths, strict=True)):
        by_key[(version, action, path)] = i
    out = []
    for i, (version, action, path) in enumerate(zip(versions, actions, paths, strict=True)):
        own = load_dv(dvs[i])
        partner_action = {"add": "remove", "remove": "add"}.get(action)
        partner = by_key.get((version, partner_action, path)) if partner_action else None
        if partner is None:
            out.append(RowSelection(deleted=own))
            continue
        other = load_dv(dvs[partner])
        out.append(RowSelection(selected=_difference(other, own)))
    return out


def _difference(a: RowIndexes | None, b: RowIndexes | None) -> RowIndexes:
    """Rows in ``a`` and not in ``b``."""
    if a is None:
        return np.empty(0, dtype=np.uint64)
    if b is None:
        return a
    return np.setdiff1d(a, b, assume_unique=True)
