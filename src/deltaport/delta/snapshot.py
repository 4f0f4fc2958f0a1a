"""A table snapshot (one version's protocol, metadata and active files) and how to build one."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cached_property

import msgspec
import pyarrow as pa
import pyarrow.compute as pc

from deltaport.delta.checkpoints import read_checkpoint
from deltaport.delta.commits import Commit, read_commits
from deltaport.delta.errors import LogCorruptError
from deltaport.delta.features import check_readable
from deltaport.delta.log_segment import LogListing
from deltaport.delta.model import FILE_SCHEMA, Metadata, Protocol
from deltaport.delta.replay import apply_commits
from deltaport.delta.timestamps import commit_time, uses_ict
from deltaport.storage import Location, Storage


class _NumRecords(msgspec.Struct):
    numRecords: int | None = None


_NUM_RECORDS_DECODER = msgspec.json.Decoder(list[_NumRecords])


@dataclass(frozen=True)
class Snapshot:
    """The table at one version. ``files`` has [`FILE_SCHEMA`][deltaport.delta.FILE_SCHEMA], one row
    per active add."""

    location: Location
    version: int
    timestamp: int
    protocol: Protocol
    metadata: Metadata
    files: pa.Table
    num_files: int
    size_in_bytes: int

    @cached_property
    def num_records(self) -> int | None:
        """Rows in the snapshot from file stats minus deleted rows; None if any stats lack it."""
        stats = self.files.column("stats")
        if stats.null_count:
            return None
        texts = stats.to_pylist()
        try:
            parsed = _NUM_RECORDS_DECODER.decode(("[" + ",".join(texts) + "]").encode())
        except msgspec.DecodeError:
            return None
        counts = [p.numRecords for p in parsed]
        if None in counts:
            return None
        dv = self.files.column("deletion_vector").combine_chunks()
        cardinality = dv.flatten()[dv.type.get_field_index("cardinality")]  # honours null DVs
        deleted = pc.sum(cardinality)
        return sum(c for c in counts if c is not None) - (deleted.as_py() or 0)


def load_snapshot(storage: Storage, listing: LogListing, version: int | None = None) -> Snapshot:
    """Replay the log segment of ``version`` (latest when None) from scratch."""
    segment = listing.segment(version)
    base = pa.Table.from_batches([], FILE_SCHEMA)
    protocol: Protocol | None = None
    metadata: Metadata | None = None
    with ThreadPoolExecutor(max_workers=1) as pool:  # the commits while the checkpoint
        commits_read = pool.submit(read_commits, storage, segment.commits)
        if segment.checkpoint is not None:
            state = read_checkpoint(storage, segment.checkpoint)
            base, protocol, metadata = state.adds, state.protocol, state.metadata
        commits = commits_read.result()
    return _build(storage, listing, segment.version, base, protocol, metadata, commits)


def update_snapshot(
    storage: Storage, listing: LogListing, snapshot: Snapshot, version: int
) -> Snapshot:
    """Apply the commits after ``snapshot`` up to ``version`` (all must be listed)."""
    commits = read_commits(storage, listing.commit_range(snapshot.version + 1, version))
    return _build(
        storage, listing, version, snapshot.files, snapshot.protocol, snapshot.metadata, commits
    )


def _build(
    storage: Storage,
    listing: LogListing,
    version: int,
    base: pa.Table,
    protocol: Protocol | None,
    metadata: Metadata | None,
    commits: Sequence[Commit],
) -> Snapshot:
    for commit in commits:
        protocol = commit.protocol or protocol
        metadata = commit.metadata or metadata
    if protocol is None:
        raise LogCorruptError(f"no protocol action in the log up to version {version}", version)
    if metadata is None:
        raise LogCorruptError(f"no metaData action in the log up to version {version}", version)
    check_readable(protocol, version)
    files = apply_commits(base, commits)
    last = commits[-1] if commits and commits[-1].version == version else None
    timestamp = snapshot_timestamp(storage, listing, version, metadata, last)
    size = pc.sum(files.column("size")).as_py() or 0
    return Snapshot(
        storage.root, version, timestamp, protocol, metadata, files, files.num_rows, size
    )


def snapshot_timestamp(
    storage: Storage, listing: LogListing, version: int, metadata: Metadata, commit: Commit | None
) -> int:
    """The commit timestamp of ``version`` (reads the commit only when ICT needs it)."""
    obj = listing.commits.get(version)
    if obj is None:
        checkpoint = listing.checkpoints[version]
        return checkpoint.files[0].last_modified_ms
    if commit is None and uses_ict(metadata, version):
        commit = read_commits(storage, [(version, obj)])[0]
    return commit_time(commit, metadata, version, obj.last_modified_ms)
