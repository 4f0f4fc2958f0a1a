"""Finding the common base version of two Delta logs without reading them whole.

Two copies (branches) of a table share their commits up to the version they were copied
at, and differ from the next version on: a commit made on one branch has a timestamp,
operation and metrics of its own, so once the two logs differ at a version they differ at
every later one. The base is then found by a binary search over the versions both logs
hold, reading about 2·log2(n) commits instead of both logs. When the logs differ already at
the oldest version both hold, there is no base and the caller reads them whole, as before.
"""

from __future__ import annotations

from dataclasses import dataclass

from deltaport.delta import DeltaTable
from deltaport.diff.history.commit_log import Commit, commit_hash, search_start_note


@dataclass(frozen=True)
class FoundBase:
    version: int
    notes: tuple[str, ...]


def search_base(
    left: DeltaTable, right: DeltaTable, left_head: int | None, right_head: int | None
) -> FoundBase | None:
    """The last version of the run of equal commits from the oldest version both logs
    hold, or None when there is none (or the logs cannot tell)."""
    listings = left.listing(), right.listing()
    left_first, left_last = left.commit_range(left_head, listings[0])
    right_first, right_last = right.commit_range(right_head, listings[1])
    start, end = max(left_first, right_first), min(left_last, right_last)
    if start > end:
        return None
    hashes: dict[tuple[int, int], str] = {}

    def equal(version: int) -> bool:
        for side, table in ((0, left), (1, right)):
            if (side, version) not in hashes:
                entry = table.commit_infos(listings[side], [version])[0]
                commit = Commit(entry.version, entry.timestamp, entry.commit_info)
                hashes[(side, version)] = commit_hash(commit)
        return hashes[(0, version)] == hashes[(1, version)]

    if not equal(start):
        return None
    low, high = start, end  # equal(low) holds; find the last equal version
    while low < high:
        middle = (low + high + 1) // 2
        if equal(middle):
            low = middle
        else:
            high = middle - 1
    notes = (search_start_note(left_first, right_first, start),) if start > 0 else ()
    return FoundBase(low, notes)
