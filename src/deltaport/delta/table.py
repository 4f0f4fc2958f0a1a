"""DeltaTable: the entry point tying listing, replay, time travel, changes and history."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from deltaport.delta.changes import TableChanges, collect_changes, select_change_data
from deltaport.delta.commits import Commit, read_commits
from deltaport.delta.errors import TableNotFoundError, VersionNotFoundError
from deltaport.delta.log_segment import LOG_DIR, LogListing
from deltaport.delta.model import Metadata
from deltaport.delta.snapshot import Snapshot, load_snapshot, update_snapshot
from deltaport.delta.timestamps import commit_time, uses_ict
from deltaport.delta.version_search import find_version
from deltaport.storage import Location, ObjectNotFoundError, Storage, parse_location

_SNAPSHOT_CACHE_SIZE = 8
_QUIET_LOG_MS = 5000
"""How long a local ``_delta_log`` must have been unchanged before its listing is reused:
longer than any file system's timestamp granularity, so a change after the listing
always moves the directory's modification time."""


@dataclass(frozen=True)
class CommitEntry:
    """One version's commitInfo (``{}`` when the commit had none) and timestamp (ms)."""

    version: int
    timestamp: int
    commit_info: Mapping[str, Any]


class DeltaTable:
    """A Delta table at ``location``; snapshots are cached and updated incrementally.

    Thread-safe: concurrent callers share the cached snapshots.
    """

    def __init__(
        self,
        location: str | Location,
        storage_options: Mapping[str, str] | None = None,
        *,
        storage: Storage | None = None,
    ) -> None:
        """``storage``: read through this one (for example with credentials that renew
        themselves) instead of a ``Storage`` made from ``storage_options``."""
        self.location = parse_location(location) if isinstance(location, str) else location
        self.storage = storage if storage is not None else Storage(self.location, storage_options)
        self._lock = threading.RLock()
        self._latest: Snapshot | None = None
        self._snapshots: OrderedDict[int, Snapshot] = OrderedDict()
        self._icts: dict[int, int | None] = {}
        self._seen: dict[int, tuple[str, int, int]] = {}
        self._readable: set[int] = set()
        self._latest_by_log_stamp: tuple[int, int, int] | None = None
        self._log_dir = self.storage.resolve(LOG_DIR)
        self.on_resize: Callable[[DeltaTable], None] | None = None
        """Called when the snapshots kept change (see `held_bytes`)."""

    def __repr__(self) -> str:
        return f"DeltaTable({self.location.uri!r})"

    def held_bytes(self) -> int:
        """An estimate of the memory the kept snapshots take (their file tables)."""
        with self._lock:
            kept = {id(s): s for s in (self._latest, *self._snapshots.values()) if s is not None}
        return sum(s.files.nbytes for s in kept.values())

    # -- versions ---------------------------------------------------------------------
    def listing(self) -> LogListing:
        """A fresh listing of ``_delta_log``."""
        objects = self.storage.list_dir(LOG_DIR)
        if not objects:
            raise TableNotFoundError(
                f"no Delta table at {self.location.uri}: _delta_log is missing or empty"
            )
        return LogListing.parse(objects, self.location.uri)

    def latest_version(self) -> int:
        """The latest version. On local disk the last listing's answer is reused while the
        ``_delta_log`` directory is unchanged (a new or removed log file changes its
        modification time), which saves listing it on every ``/version`` request."""
        if self.location.kind != "local":
            return self.listing().latest_version
        try:
            log_dir = self.storage.head(self._log_dir)
        except ObjectNotFoundError:
            return self.listing().latest_version  # raises TableNotFoundError
        stamp = (log_dir.last_modified_ms, log_dir.size)
        known = self._latest_by_log_stamp
        if known is not None and known[:2] == stamp:
            return known[2]
        listed_at = time.time() * 1000
        version = self.listing().latest_version
        if listed_at - log_dir.last_modified_ms > _QUIET_LOG_MS:
            self._latest_by_log_stamp = (*stamp, version)
        return version

    def check_readable(self, version: int) -> None:
        """Parse the commit of ``version`` once (raising
        [`LogCorruptError`][deltaport.delta.LogCorruptError] if it is corrupt), so that what only
        asks for the version (``/version``) reports a corrupt newest commit as the reads of the
        snapshot do."""
        if version in self._readable or version in self._snapshots:
            return
        listing = self.listing()
        obj = listing.commits.get(version)
        if obj is not None:
            read_commits(self.storage, [(version, obj)])
        with self._lock:
            self._readable.add(version)

    # -- snapshots --------------------------------------------------------------------
    def snapshot(
        self, version: int | None = None, *, timestamp: datetime | None = None
    ) -> Snapshot:
        """The latest snapshot, or the one at ``version`` or as of ``timestamp``."""
        if version is not None and timestamp is not None:
            raise ValueError("give either a version or a timestamp, not both")
        listing = self.listing()
        if timestamp is not None:
            version = self._version_at(listing, timestamp, at_or_after=False)
        if version is not None:
            return self._snapshot_at(listing, version)
        with self._lock:
            self._latest = self._snapshot_at(listing, listing.latest_version)
            return self._latest

    def adopt_snapshot(self, snapshot: Snapshot) -> None:
        """Take ``snapshot``, of another copy of this table with the same commits up to its
        version (a branch copied from it), as this table's snapshot at that version: later
        versions are then replayed from it instead of from a checkpoint."""
        listing = self.listing()
        version = snapshot.version
        if version not in listing.commits and version not in listing.checkpoints:
            return
        with self._lock:
            if version not in self._snapshots:
                self._snapshots[version] = replace(snapshot, location=self.location)
                self._seen[version] = _file_identity(listing, version)

    def _snapshot_at(self, listing: LogListing, version: int) -> Snapshot:
        with self._lock:
            return self._cached_or_loaded(listing, version)

    def _cached_or_loaded(self, listing: LogListing, version: int) -> Snapshot:
        if version < 0 or version > listing.latest_version:
            raise VersionNotFoundError(
                f"version {version} does not exist; available versions: {listing.available_range()}"
            )
        self._forget_if_replaced(listing)
        cached = self._snapshots.get(version)
        if cached is not None:
            self._snapshots.move_to_end(version)
            return cached
        segment = listing.segment(version)
        floor = segment.checkpoint.version if segment.checkpoint is not None else -1
        bases = [s for s in (self._latest, *self._snapshots.values()) if s is not None]
        usable = [s for s in bases if floor <= s.version <= version]
        if usable:
            base = max(usable, key=lambda s: s.version)
            snap = (
                base
                if base.version == version
                else update_snapshot(self.storage, listing, base, version)
            )
        else:
            snap = load_snapshot(self.storage, listing, version)
        self._snapshots[version] = snap
        self._seen[version] = _file_identity(listing, version)
        while len(self._snapshots) > _SNAPSHOT_CACHE_SIZE:
            self._snapshots.popitem(last=False)
        if self.on_resize is not None:
            self.on_resize(self)
        return snap

    def _forget_if_replaced(self, listing: LogListing) -> None:
        """Drop every cache when a log file we replayed changed (the table was replaced)."""
        if any(_file_identity(listing, v) != seen for v, seen in self._seen.items()):
            self._latest = None
            self._snapshots.clear()
            self._icts.clear()
            self._seen.clear()
            self._readable.clear()

    # -- timestamps -------------------------------------------------------------------
    def commit_timestamp(self, version: int) -> int:
        """Commit time of ``version`` in ms: its in-commit timestamp when enabled, else the
        commit file's modification time."""
        return self._commit_timestamp(self.listing(), version)

    def version_at(self, timestamp: datetime, *, at_or_after: bool = False) -> int:
        """The latest version committed at or before ``timestamp`` (time travel), or with
        ``at_or_after`` the earliest version committed at or after it."""
        return self._version_at(self.listing(), timestamp, at_or_after=at_or_after)

    def _version_at(self, listing: LogListing, timestamp: datetime, *, at_or_after: bool) -> int:
        metadata = self._snapshot_at(listing, listing.latest_version).metadata
        return find_version(
            listing,
            metadata,
            _to_ms(timestamp),
            at_or_after=at_or_after,
            ict_of=lambda v: self._in_commit_timestamp(listing, v),
        )

    def _in_commit_timestamp(self, listing: LogListing, version: int) -> int | None:
        """The commit's ICT (cached: a published commit never changes)."""
        if version not in self._icts:
            self._icts[version] = self._read_commit(listing, version).in_commit_timestamp
        return self._icts[version]

    def _commit_timestamp(self, listing: LogListing, version: int) -> int:
        metadata = self._snapshot_at(listing, listing.latest_version).metadata
        obj = listing.commits.get(version)
        if obj is None and version in listing.checkpoints:
            return listing.checkpoints[version].files[0].last_modified_ms
        if obj is None:
            raise VersionNotFoundError(
                f"no commit file for version {version}; available versions: "
                f"{listing.available_range()}"
            )
        ict = self._in_commit_timestamp(listing, version) if uses_ict(metadata, version) else None
        return obj.last_modified_ms if ict is None else ict

    def _read_commit(self, listing: LogListing, version: int) -> Commit:
        obj = listing.commits.get(version)
        if obj is None:
            raise VersionNotFoundError(
                f"no commit file for version {version}; available versions: "
                f"{listing.available_range()}"
            )
        return read_commits(self.storage, [(version, obj)])[0]

    # -- version ranges ---------------------------------------------------------------
    def _commits(self, listing: LogListing, start: int, end: int | None) -> list[Commit]:
        last = listing.latest_version if end is None else end
        if start < 0 or start > last or last > listing.latest_version:
            raise VersionNotFoundError(
                f"version range {start}..{last} is not available; available versions: "
                f"{listing.available_range()}"
            )
        first_commit = min(listing.commits, default=listing.latest_version + 1)
        if start < first_commit:
            raise VersionNotFoundError(
                f"commit {start} is no longer in the log (cleaned up); earliest commit is "
                f"{first_commit}"
            )
        return read_commits(self.storage, listing.commit_range(start, last))

    def changes(self, start: int, end: int | None = None) -> TableChanges:
        """All add/remove/cdc actions of versions ``start..end`` (inclusive)."""
        listing = self.listing()
        commits = self._commits(listing, start, end)
        at_start = self._snapshot_at(listing, start)
        metadata = self._snapshot_at(listing, listing.latest_version).metadata
        timestamps = [
            commit_time(c, metadata, c.version, listing.commits[c.version].last_modified_ms)
            for c in commits
        ]
        return collect_changes(
            start, commits[-1].version, at_start.protocol, at_start.metadata, commits, timestamps
        )

    def change_data(self, start: int, end: int | None = None) -> TableChanges:
        """The change-data-feed files of ``start..end``; see ``select_change_data``."""
        return select_change_data(self.changes(start, end))

    def commit_range(
        self, end: int | None = None, listing: LogListing | None = None
    ) -> tuple[int, int]:
        """The first and last version of the run of commits still in the log that ends at
        ``end`` (default: the latest)."""
        listing = listing or self.listing()
        last = listing.latest_version if end is None else end
        return _first_of_contiguous_run(listing, last), last

    def commit_infos(self, listing: LogListing, versions: Sequence[int]) -> list[CommitEntry]:
        """commitInfo of just ``versions`` of ``listing`` (one read each, no snapshot): the
        timestamp is the commitInfo's own, else the file's modification time."""
        missing = [v for v in versions if v not in listing.commits]
        if missing:
            raise VersionNotFoundError(f"no commit file for version {missing[0]}")
        commits = read_commits(self.storage, [(v, listing.commits[v]) for v in versions])
        entries = []
        for c in commits:
            info = c.commit_info or {}
            stamp = info.get("timestamp")
            if not isinstance(stamp, int):
                stamp = listing.commits[c.version].last_modified_ms
            entries.append(CommitEntry(c.version, stamp, info))
        return entries

    def metadata_history(
        self, after: int | None = None, end: int | None = None
    ) -> tuple[int, list[tuple[int, Metadata]]]:
        """The table's metadata as far back as the log still holds it: the earliest
        reconstructable version (returned first), then ``(version, metadata)`` at that
        version and at each later commit with a metaData action up to ``end`` (default:
        the latest). With ``after`` (a version at or past the earliest one), only the
        commits after it are read."""
        listing = self.listing()
        earliest = listing.earliest_version
        if earliest is None:
            listing.segment()  # raises the log's own error
            raise VersionNotFoundError("no version of the table can be reconstructed")
        last = listing.latest_version if end is None else end
        found: list[tuple[int, Metadata]] = []
        if after is None or after < earliest:
            found.append((earliest, self._snapshot_at(listing, earliest).metadata))
            after = earliest
        if after < last:
            for commit in read_commits(self.storage, listing.commit_range(after + 1, last)):
                if commit.metadata is not None:
                    found.append((commit.version, commit.metadata))
        return earliest, found

    def history(self, start: int | None = None, end: int | None = None) -> list[CommitEntry]:
        """commitInfo of each version in ``start..end`` (default: all commits still in the
        log), oldest first."""
        listing = self.listing()
        last = listing.latest_version if end is None else end
        first = start if start is not None else _first_of_contiguous_run(listing, last)
        commits = self._commits(listing, first, last)
        metadata = self._snapshot_at(listing, listing.latest_version).metadata
        return [
            CommitEntry(
                c.version,
                commit_time(c, metadata, c.version, listing.commits[c.version].last_modified_ms),
                c.commit_info or {},
            )
            for c in commits
        ]


def _file_identity(listing: LogListing, version: int) -> tuple[str, int, int]:
    """Name, size and mtime of the commit (or checkpoint) file of ``version``."""
    obj = listing.commits.get(version)
    if obj is None:
        checkpoint = listing.checkpoints.get(version)
        if checkpoint is None:
            return ("", -1, -1)
        obj = checkpoint.files[0]
    return (obj.name, obj.size, obj.last_modified_ms)


def _first_of_contiguous_run(listing: LogListing, last: int) -> int:
    first = last
    while first - 1 in listing.commits:
        first -= 1
    return first


def _to_ms(timestamp: datetime) -> int:
    if timestamp.tzinfo is None:
        timestamp = timestamp.replace(tzinfo=UTC)
    return int(timestamp.timestamp() * 1000)
