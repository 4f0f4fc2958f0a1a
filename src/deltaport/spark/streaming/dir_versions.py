"""Driver side of a stream read in directory mode: the files of each version come from the
table's Delta log, read with credentials the server vended, instead of from ``/query`` and
``/changes``. The same versions give the same rows as in ``url`` mode; within a version the
files are ordered by path (``url`` mode orders them by the server's file ids)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import InputPartition

from deltaport.client import SharingClient
from deltaport.client.dir_access.directory import DirectoryRead, DirectoryTable
from deltaport.delta.changes import select_change_data
from deltaport.delta.model import FILE_SCHEMA
from deltaport.protocol.timestamps import parse_timestamp
from deltaport.read.scan import end_metadata
from deltaport.spark.base.options import SharingOptions
from deltaport.spark.reading.directory import DirectoryPlan, split_directory
from deltaport.spark.streaming.versions import check_stream_schema, reads_adds


@dataclass(frozen=True)
class DirectoryVersionFiles:
    """The files a stream reads for one version (snapshot files, or that version's
    changes), ordered by path, and the metadata to read them with."""

    version: int
    read: DirectoryRead

    @cached_property
    def sizes(self) -> tuple[int, ...]:
        return tuple(self.read.files.column("size").to_pylist())


def _by_path(files: pa.Table) -> pa.Table:
    keys = [("path", "ascending")]
    if "action" in files.column_names:
        keys.append(("action", "ascending"))
    return files.take(pc.sort_indices(files, sort_keys=keys))


class DirectoryVersionSource:
    """Reads and keeps the files of versions for one stream from the table's log.

    Holds the client (for renewing credentials) and the opened directory for the life
    of the stream; ``close`` releases them."""

    mode = "dir"

    def __init__(
        self,
        client: SharingClient,
        directory: DirectoryTable,
        options: SharingOptions,
        schema: pa.Schema,
    ) -> None:
        self._client = client
        self._directory = directory
        self.options = options
        self.schema = schema
        self._snapshot: DirectoryVersionFiles | None = None
        self._changes: dict[int, DirectoryVersionFiles] = {}

    def latest_version(self) -> int:
        return self._directory.delta.latest_version()

    def version_at(self, timestamp: str) -> int:
        """The first version committed at or after ``timestamp`` (as ``/version`` answers
        ``startingTimestamp``)."""
        return self._directory.delta.version_at(parse_timestamp(timestamp), at_or_after=True)

    def snapshot(self, version: int) -> DirectoryVersionFiles:
        if self._snapshot is None or self._snapshot.version != version:
            read = self._directory.snapshot_read(version)
            check_stream_schema(self.options, self.schema, read.metadata, version)
            files = _by_path(read.files)
            self._snapshot = DirectoryVersionFiles(version, dataclasses.replace(read, files=files))
        return self._snapshot

    def changes(self, version: int, latest: int) -> DirectoryVersionFiles:
        """The files of the commit of ``version`` (<= ``latest``); reads up to
        ``maxVersionsPerRpc`` commits of the log at once."""
        if version not in self._changes:
            end = min(latest, version + self.options.max_versions_per_rpc - 1)
            self._read_commits(version, end)
        return self._changes[version]

    def _read_commits(self, start: int, end: int) -> None:
        changes = self._directory.delta.changes(start, end)
        for entry in changes.versions:
            if entry.metadata is not None:
                check_stream_schema(self.options, self.schema, entry.metadata, entry.version)
        cdf = self.options.read_change_feed
        metadata = end_metadata(changes)
        files = select_change_data(changes).files if cdf else changes.files
        for version in range(start, end + 1):
            of_version = files.filter(pc.equal(files.column("version"), version))
            chosen = of_version if cdf else self._appends(version, of_version)
            read = DirectoryRead(_by_path(chosen), metadata, cdf, version)
            self._changes[version] = DirectoryVersionFiles(version, read)

    def _appends(self, version: int, actions: pa.Table) -> pa.Table:
        """The added files a (non change-feed) stream reads from one commit, by the
        stream's options for commits that delete or rewrite rows."""
        action = actions.column("action")
        data_change = pc.fill_null(actions.column("data_change"), True)
        changed = pc.or_(data_change, pc.equal(action, "cdc"))
        adds = actions.filter(pc.and_(changed, pc.equal(action, "add")))
        removes = pc.sum(pc.and_(changed, pc.is_in(action, pa.array(["remove", "cdc"]))))
        if not reads_adds(self.options, version, adds.num_rows, removes.as_py() or 0):
            adds = adds.slice(0, 0)
        return adds.select(FILE_SCHEMA.names)

    def forget_before(self, version: int) -> None:
        for v in [v for v in self._changes if v < version]:
            del self._changes[v]

    def partitions(
        self,
        unit: DirectoryVersionFiles,
        indexes: Sequence[int],
        target_bytes: int,
        min_partitions: int,
    ) -> list[InputPartition]:
        """Input partitions reading the files ``indexes`` of ``unit``, each with the
        directory's current credentials (renewed first when about to lapse)."""
        read = dataclasses.replace(unit.read, files=unit.read.files.take(list(indexes)))
        plan = DirectoryPlan(
            tuple(self._directory.credentials()), dict(self.options.storage_options), read
        )
        return list(split_directory(plan, target_bytes, min_partitions))

    def close(self) -> None:
        self._client.close()
