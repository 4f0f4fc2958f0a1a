"""Which log files make up a version: the newest usable checkpoint plus the commits after it.

The ``_delta_log`` directory is listed in full and the listing is authoritative, so a
stale, missing or malformed ``_last_checkpoint`` can never mislead the selection.
Staged commits (``_delta_log/_staged_commits/``) are not listed and so never counted.
Log compaction files (``x.y.compacted.json``) are optional and are not used: commits are
always present beside them, and writers disagree on their action order (delta-kernel-rs
lists a range's actions newest first, including superseded ones).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from deltaport.delta.errors import LogCorruptError, TableNotFoundError, VersionNotFoundError
from deltaport.storage import ObjectInfo

LOG_DIR = "_delta_log"

_COMMIT = re.compile(r"^(\d+)\.json$")
_CLASSIC = re.compile(r"^(\d+)\.checkpoint\.parquet$")
_MULTIPART = re.compile(r"^(\d+)\.checkpoint\.(\d+)\.(\d+)\.parquet$")
_V2 = re.compile(r"^(\d+)\.checkpoint\.[0-9a-fA-F-]{36}\.(json|parquet)$")

CheckpointKind = Literal["classic", "multipart", "v2"]


@dataclass(frozen=True)
class Checkpoint:
    """One complete checkpoint; ``files`` are names inside ``_delta_log`` (parts in order)."""

    version: int
    kind: CheckpointKind
    files: tuple[ObjectInfo, ...]


@dataclass(frozen=True)
class LogSegment:
    """The files to replay for ``version``: a checkpoint (or none) and the commits after it."""

    version: int
    checkpoint: Checkpoint | None
    commits: tuple[tuple[int, ObjectInfo], ...]


@dataclass(frozen=True)
class LogListing:
    """The parsed ``_delta_log`` listing: commit files and complete checkpoints by version."""

    commits: dict[int, ObjectInfo]
    checkpoints: dict[int, Checkpoint]

    @classmethod
    def parse(cls, objects: Sequence[ObjectInfo], where: str) -> LogListing:
        commits: dict[int, ObjectInfo] = {}
        singles: dict[int, Checkpoint] = {}
        parts: dict[tuple[int, int], dict[int, ObjectInfo]] = {}
        for obj in objects:
            name = obj.name
            if m := _COMMIT.match(name):
                commits[int(m.group(1))] = obj
            elif m := _CLASSIC.match(name):
                singles.setdefault(int(m.group(1)), Checkpoint(int(m.group(1)), "classic", (obj,)))
            elif m := _V2.match(name):
                singles.setdefault(int(m.group(1)), Checkpoint(int(m.group(1)), "v2", (obj,)))
            elif m := _MULTIPART.match(name):
                key = (int(m.group(1)), int(m.group(3)))
                parts.setdefault(key, {})[int(m.group(2))] = obj
        checkpoints = dict(singles)
        for (version, total), found in parts.items():
            if version not in checkpoints and set(found) == set(range(1, total + 1)):
                ordered = tuple(found[i] for i in range(1, total + 1))
                checkpoints[version] = Checkpoint(version, "multipart", ordered)
        if not commits and not checkpoints:
            raise TableNotFoundError(f"no Delta table at {where}: _delta_log has no commits")
        return cls(commits, checkpoints)

    @property
    def latest_version(self) -> int:
        return max(max(self.commits, default=-1), max(self.checkpoints, default=-1))

    @property
    def earliest_version(self) -> int | None:
        """The oldest version that can be reconstructed, or None when none can."""
        if 0 in self.commits:
            return 0
        return min(self.checkpoints, default=None)

    def available_range(self) -> str:
        earliest = self.earliest_version
        if earliest is None:
            return "none (no checkpoint and no commit 0)"
        return f"{earliest}..{self.latest_version}"

    def segment(self, version: int | None = None) -> LogSegment:
        """The segment reconstructing ``version`` (latest when None)."""
        latest = self.latest_version
        target = latest if version is None else version
        if target < 0 or target > latest:
            raise VersionNotFoundError(
                f"version {target} does not exist; available versions: {self.available_range()}"
            )
        usable = [v for v in self.checkpoints if v <= target]
        if usable:
            checkpoint: Checkpoint | None = self.checkpoints[max(usable)]
            first = max(usable) + 1
        elif 0 in self.commits:
            checkpoint, first = None, 0
        elif self.earliest_version is None:
            raise LogCorruptError(
                f"log cannot be reconstructed: no checkpoint and no commit 0 "
                f"(earliest commit is {min(self.commits)})"
            )
        else:
            raise VersionNotFoundError(
                f"version {target} is no longer reconstructable (log cleaned up); "
                f"available versions: {self.available_range()}"
            )
        return LogSegment(target, checkpoint, self.commit_range(first, target))

    def commit_range(self, first: int, last: int) -> tuple[tuple[int, ObjectInfo], ...]:
        """Commit files ``first..last``; a missing one is a corrupt log."""
        missing = [v for v in range(first, last + 1) if v not in self.commits]
        if missing:
            shown = ", ".join(str(v) for v in missing[:5]) + (" ..." if len(missing) > 5 else "")
            files = (
                "the commit file for version" if len(missing) == 1 else "commit files for versions"
            )
            raise LogCorruptError(
                f"log is missing {files} {shown} (needed to reconstruct version {last})",
                missing[0],
            )
        return tuple((v, self.commits[v]) for v in range(first, last + 1))
