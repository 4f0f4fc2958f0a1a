"""Aligning two Delta histories: which commits they share and where they part.

Two commits are the same when a hash over their commitInfo ``timestamp``, ``operation``,
``operationParameters`` and ``operationMetrics`` matches (the lakeFS differ's rule). The
common base is the last version of the run of equal commits that starts at the oldest
version both logs still hold.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from deltaport.diff.base.errors import InvalidBaseVersionError


@dataclass(frozen=True)
class Commit:
    """One version of a history: its timestamp (ms) and commitInfo (empty when absent)."""

    version: int
    timestamp: int
    commit_info: Mapping[str, Any]


def commit_hash(commit: Commit) -> str:
    info = commit.commit_info
    identity = {
        "timestamp": info.get("timestamp", commit.timestamp),
        "operation": info.get("operation"),
        "operationParameters": info.get("operationParameters"),
        "operationMetrics": info.get("operationMetrics"),
    }
    encoded = msgspec.json.encode(identity, order="sorted")
    return hashlib.sha256(encoded).hexdigest()


@dataclass(frozen=True)
class Alignment:
    """The base version (None when the histories share no commit still in both logs) and
    each side's own versions after it, ascending."""

    base_version: int | None
    left_only: tuple[int, ...]
    right_only: tuple[int, ...]
    notes: tuple[str, ...]


def align(
    left: Sequence[Commit], right: Sequence[Commit], base_version: int | None = None
) -> Alignment:
    """Align two non-empty histories (ascending, contiguous), from ``base_version`` if given."""
    left_hashes = {c.version: commit_hash(c) for c in left}
    right_hashes = {c.version: commit_hash(c) for c in right}
    notes: list[str] = []
    if base_version is None:
        base = _find_base(left_hashes, right_hashes, notes)
    else:
        base = _check_base(base_version, left_hashes, right_hashes, notes)
    return Alignment(
        base,
        _after(left_hashes, base, "left", notes),
        _after(right_hashes, base, "right", notes),
        tuple(notes),
    )


def _find_base(left: Mapping[int, str], right: Mapping[int, str], notes: list[str]) -> int | None:
    start = max(min(left), min(right))
    end = min(max(left), max(right))
    if start > 0:
        notes.append(search_start_note(min(left), min(right), start))
    if start > end:
        notes.append("The two logs share no version; no common base was found.")
        return None
    base: int | None = None
    for version in range(start, end + 1):
        if left[version] != right[version]:
            break
        base = version
    if base is None:
        if start == 0:
            notes.append("The tables have no common history: they differ from version 0.")
        else:
            notes.append(
                f"The tables differ already at version {start}; their common base, if any, "
                "is older and no longer in the logs."
            )
    return base


def search_start_note(left_first: int, right_first: int, start: int) -> str:
    return (
        f"The left log holds versions from {left_first} and the right log from "
        f"{right_first}; the common base was searched from version {start}, the oldest "
        "version both still hold."
    )


def _check_base(
    base: int, left: Mapping[int, str], right: Mapping[int, str], notes: list[str]
) -> int:
    if base < 0:
        raise InvalidBaseVersionError(f"base version must be >= 0, got {base}")
    for side, hashes in (("left", left), ("right", right)):
        if base > max(hashes):
            raise InvalidBaseVersionError(
                f"base version {base} is newer than the {side} table's latest version {max(hashes)}"
            )
    if base in left and base in right and left[base] != right[base]:
        notes.append(f"Warning: the left and right commits at base version {base} differ.")
    return base


def _after(
    hashes: Mapping[int, str], base: int | None, side: str, notes: list[str]
) -> tuple[int, ...]:
    versions = sorted(v for v in hashes if base is None or v > base)
    if base is not None and min(hashes) > base + 1:
        notes.append(
            f"The {side} log no longer holds versions {base + 1} to {min(hashes) - 1}; "
            f"its own commits are listed from version {min(hashes)}."
        )
    return tuple(versions)
