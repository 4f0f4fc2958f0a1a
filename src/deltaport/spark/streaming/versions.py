"""Driver side of a stream: the files each table version contributes, fetched from the
server a range of versions at a time and kept until the stream has committed past them."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import pyarrow as pa
from pyspark.sql.datasource import InputPartition

from deltaport.client import (
    Metadata,
    RemoteFile,
    ScanPlan,
    SharingClient,
    SharingError,
    TableScan,
)
from deltaport.read import table_arrow_schema
from deltaport.spark.base.options import SharingOptions
from deltaport.spark.reading.partitions import split_files


class StreamError(RuntimeError):
    """The stream cannot go on (a delete the options do not allow, a schema change)."""


@dataclass(frozen=True)
class VersionFiles:
    """The files a stream reads for one version (snapshot files, or that version's
    changes), in a fixed order, and a plan (without files) to read them with."""

    version: int
    files: tuple[RemoteFile, ...]
    plan: ScanPlan

    @cached_property
    def sizes(self) -> tuple[int, ...]:
        return tuple(f.size for f in self.files)


def file_order(f: RemoteFile) -> tuple[str, str]:
    return (f.id, f.action)


class VersionSource:
    """Fetches and keeps the files of versions for one stream (``url`` mode: the server
    lists and signs them)."""

    mode = "url"

    def __init__(self, options: SharingOptions, schema: pa.Schema) -> None:
        self.options = options
        self.schema = schema
        self._snapshot: VersionFiles | None = None
        self._changes: dict[int, VersionFiles] = {}
        self._query_supported = True
        """Whether the server answers ``/query`` with ``startingVersion``; servers that
        do not are asked for the change data feed instead."""

    def _client(self) -> SharingClient:
        return SharingClient(self.options.profile, concurrency=1, access_mode="url")

    def latest_version(self) -> int:
        with self._client() as client:
            return client.table(self.options.table).version()

    def version_at(self, timestamp: str) -> int:
        with self._client() as client:
            return client.table(self.options.table).version(starting_timestamp=timestamp)

    def snapshot(self, version: int) -> VersionFiles:
        """The files of the table at ``version`` (the stream's initial snapshot)."""
        if self._snapshot is None or self._snapshot.version != version:
            with self._client() as client:
                scan = client.table(self.options.table).snapshot(
                    version=version, use_delta_format=self.options.use_delta_format
                )
                assert isinstance(scan, TableScan)  # streams read in url mode
                plan = scan.plan()
            self._check_schema(plan.metadata, version)
            files = tuple(sorted(plan.files, key=file_order))
            self._snapshot = VersionFiles(version, files, dataclasses.replace(plan, files=()))
        return self._snapshot

    def changes(self, version: int, latest: int) -> VersionFiles:
        """The files the stream reads for the commit of ``version`` (<= ``latest``);
        fetches up to ``maxVersionsPerRpc`` versions at once."""
        if version not in self._changes:
            end = min(latest, version + self.options.max_versions_per_rpc - 1)
            self._fetch(version, end)
        return self._changes[version]

    def forget_before(self, version: int) -> None:
        for v in [v for v in self._changes if v < version]:
            del self._changes[v]

    def partitions(
        self, unit: VersionFiles, indexes: Sequence[int], target_bytes: int, min_partitions: int
    ) -> list[InputPartition]:
        """Input partitions reading the files ``indexes`` of ``unit``."""
        plan = dataclasses.replace(unit.plan, files=tuple(unit.files[i] for i in indexes))
        return list(split_files(plan, target_bytes, min_partitions))

    def close(self) -> None:
        """Nothing is kept open between calls."""

    def _fetch(self, start: int, end: int) -> None:
        with self._client() as client:
            if self.options.read_change_feed:
                plan = self._change_plan(client, start, end)
            elif self._query_supported:
                try:
                    plan = client.table(self.options.table).files_since(
                        start, end, use_delta_format=self.options.use_delta_format
                    )
                except SharingError as exc:
                    if exc.status != 400 or "startingVersion" not in exc.message:
                        raise
                    self._query_supported = False
                    return self._fetch(start, end)
            else:
                plan = dataclasses.replace(self._change_plan(client, start, end), cdf=False)
        for version, metadata in plan.metadata_changes or ((end, plan.metadata),):
            self._check_schema(metadata, version)
        empty = dataclasses.replace(plan, files=())
        by_version: dict[int, list[RemoteFile]] = {v: [] for v in range(start, end + 1)}
        for f in plan.files:
            if f.version is not None and start <= f.version <= end:
                by_version[f.version].append(f)
        for version, files in by_version.items():
            chosen = files if self.options.read_change_feed else self._appends(version, files)
            self._changes[version] = VersionFiles(
                version, tuple(sorted(chosen, key=file_order)), empty
            )

    def _change_plan(self, client: SharingClient, start: int, end: int) -> ScanPlan:
        """The change data feed plan of ``start..end``."""
        scan = client.table(self.options.table).changes(
            starting_version=start,
            ending_version=end,
            use_delta_format=self.options.use_delta_format,
        )
        assert isinstance(scan, TableScan)  # streams read in url mode
        return scan.plan()

    def _appends(self, version: int, files: list[RemoteFile]) -> list[RemoteFile]:
        """The files a (non change-feed) stream reads from one commit (see
        ``reads_adds``). Change-data (cdc) files mark a commit that deleted or updated
        rows; files a commit only rearranged (``dataChange`` false) add and delete none."""
        changed = [f for f in files if f.data_change or f.action == "cdc"]
        adds = [f for f in changed if f.action in ("add", "file")]
        removes = [f for f in changed if f.action in ("remove", "cdc")]
        return adds if reads_adds(self.options, version, len(adds), len(removes)) else []

    def _check_schema(self, metadata: Metadata, version: int) -> None:
        check_stream_schema(self.options, self.schema, metadata, version)


def reads_adds(options: SharingOptions, version: int, adds: int, removes: int) -> bool:
    """Whether a (non change-feed) stream reads the added files of a commit with ``adds``
    data-changing adds and ``removes`` data-changing removes (or cdc files); False: the
    commit is skipped. A commit that deletes or rewrites rows fails the stream unless the
    options say how to carry it."""
    if not removes:
        return True
    if options.skip_change_commits:
        return False
    if options.ignore_changes:
        return True
    if options.ignore_deletes and not adds:
        return False
    kind = "updates or rewrites" if adds else "deletes"
    raise StreamError(
        f"version {version} of {options.table} {kind} rows ({removes} files removed), "
        "which a stream of appends cannot carry. Set ignoreDeletes (skip commits that "
        "only delete), ignoreChanges (also re-read rewritten files, rows may repeat) or "
        "skipChangeCommits (skip such commits), or read the change data feed with "
        "readChangeFeed=true"
    )


def check_stream_schema(
    options: SharingOptions, schema: pa.Schema, metadata: Metadata, version: int
) -> None:
    """Fails the stream when the table's schema at ``version`` is not the one it reads."""
    found = table_arrow_schema(metadata, cdf=options.read_change_feed)
    if not found.equals(schema):
        raise StreamError(
            f"the schema of {options.table} changed at version {version}: the stream "
            f"reads {_columns(schema)}, the table now has {_columns(found)}. "
            "Restart the stream with a new checkpoint to read the new schema"
        )


def _columns(schema: pa.Schema) -> str:
    return ", ".join(f"{f.name} {f.type}" for f in schema)
