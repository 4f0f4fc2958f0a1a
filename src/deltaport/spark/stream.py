"""Structured streaming: ``spark.readStream.format("deltaSharing")``.

The stream reads the table's snapshot at its latest version first (unless a starting
version or timestamp is given), then the files each later version adds, or with
``readChangeFeed`` the change data of each version. Micro-batches are cut by
``maxFilesPerTrigger`` / ``maxBytesPerTrigger``; ``Trigger.AvailableNow`` reads up to the
version current when the query started, in as many batches as those limits make.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxBytes,
    ReadMaxFiles,
    SupportsTriggerAvailableNow,
)

from deltaport.client import RemoteFile, ScanPlan
from deltaport.spark.file_reading import read_plan_files
from deltaport.spark.offsets import Position
from deltaport.spark.options import OptionError, SharingOptions
from deltaport.spark.partitions import FilesPartition, split_files
from deltaport.spark.versions import VersionFiles, VersionSource

DEFAULT_MAX_FILES_PER_TRIGGER = 1000
"""Files per micro-batch when neither maxFilesPerTrigger nor maxBytesPerTrigger is set."""


@dataclasses.dataclass
class Budget:
    """How many more files / bytes a micro-batch may take (``None``: no bound). The
    first file is always admitted, so one oversized file cannot stall the stream."""

    files: int | None
    bytes: int | None
    taken_files: int = 0
    taken_bytes: int = 0

    def admits(self, f: RemoteFile) -> bool:
        if self.taken_files == 0:
            return True
        if self.files is not None and self.taken_files >= self.files:
            return False
        return self.bytes is None or self.taken_bytes + f.size <= self.bytes

    def take(self, f: RemoteFile) -> None:
        self.taken_files += 1
        self.taken_bytes += f.size


class StreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Offsets, admission control and micro-batch planning of one streaming query."""

    def __init__(self, options: SharingOptions, schema: pa.Schema) -> None:
        if options.time_travel:
            raise OptionError("versionAsOf/timestampAsOf do not apply to streams")
        if options.read_change_feed and not (
            options.starting_version is not None
            or options.starting_version_latest
            or options.starting_timestamp is not None
        ):
            raise OptionError(
                "a readChangeFeed stream needs startingVersion (a version or 'latest') "
                "or startingTimestamp"
            )
        self.options = options
        self.schema = schema
        self.source = VersionSource(options, schema)
        self._latest: int | None = None
        self._checked_at = 0.0
        self._target: int | None = None

    # -- offsets ----------------------------------------------------------------------
    def initialOffset(self) -> dict[str, Any]:
        o = self.options
        if o.starting_version is not None:
            return Position(o.starting_version).to_offset()
        if o.starting_timestamp is not None:
            return Position(self.source.version_at(o.starting_timestamp)).to_offset()
        latest = self._latest_version(fresh=True)
        if o.starting_version_latest:
            return Position(latest + 1).to_offset()
        return Position(latest, 0, snapshot=True).to_offset()

    def prepareForTriggerAvailableNow(self) -> None:
        self._target = self._latest_version(fresh=True)

    def getDefaultReadLimit(self) -> ReadLimit:
        o = self.options
        if o.max_files_per_trigger is not None:
            return ReadMaxFiles(o.max_files_per_trigger)
        if o.max_bytes_per_trigger is not None:
            return ReadMaxBytes(o.max_bytes_per_trigger)
        return ReadMaxFiles(DEFAULT_MAX_FILES_PER_TRIGGER)

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        budget = self._budget(limit)
        position = Position.from_offset(start)
        latest = self._latest_version()
        for unit, first in self._units(position, latest):
            for index in range(first, len(unit.files)):
                f = unit.files[index]
                if not budget.admits(f):
                    return _position_in(unit, index, position).to_offset()
                budget.take(f)
            position = Position(unit.version + 1)
        return position.to_offset()

    def reportLatestOffset(self) -> dict[str, Any] | None:
        latest = self._target if self._target is not None else self._latest
        return None if latest is None else Position(latest + 1).to_offset()

    def _budget(self, limit: ReadLimit) -> Budget:
        if isinstance(limit, ReadAllAvailable):
            return Budget(None, None)
        files = self.options.max_files_per_trigger
        size = self.options.max_bytes_per_trigger
        if isinstance(limit, ReadMaxFiles):
            files = limit.max_files
        elif isinstance(limit, ReadMaxBytes):
            size = limit.max_bytes
        return Budget(files, size)

    def _latest_version(self, fresh: bool = False) -> int:
        """The table version to read up to: the availableNow target, else the server's
        latest version, asked at most once per ``versionPollIntervalSeconds``."""
        if self._target is not None and not fresh:
            return self._target
        now = time.monotonic()
        due = now - self._checked_at >= self.options.version_poll_seconds
        if fresh or self._latest is None or due:
            self._latest = self.source.latest_version()
            self._checked_at = now
        return self._latest

    def _units(self, position: Position, latest: int) -> Iterator[tuple[VersionFiles, int]]:
        """The snapshot / versions from ``position`` up to ``latest``, with the index of
        the first file not yet read in each."""
        if position.snapshot:
            yield self.source.snapshot(position.version), position.index
            position = position.next_version()
        version, first = position.version, position.index
        while version <= latest:
            yield self.source.changes(version, latest), first
            version, first = version + 1, 0

    # -- micro-batches ----------------------------------------------------------------
    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        begin, stop = Position.from_offset(start), Position.from_offset(end)
        if begin == stop:
            return []
        groups: list[ScanPlan] = []
        last = stop.version if stop.index > 0 else stop.version - 1
        for unit, first in self._units(begin, last):
            if _at_or_after(unit, 0, stop):
                break
            chosen = [
                f
                for i, f in enumerate(unit.files)
                if i >= first and not _at_or_after(unit, i, stop)
            ]
            if chosen:
                groups.append(dataclasses.replace(unit.plan, files=tuple(chosen)))
        partitions: list[InputPartition] = []
        for plan in groups:
            partitions.extend(
                split_files(plan, self.options.partition_bytes, self.options.min_partitions)
            )
        return partitions

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, FilesPartition)
        return read_plan_files(partition.plan, self.options.profile, self.schema)

    def commit(self, end: dict[str, Any]) -> None:
        self.source.forget_before(Position.from_offset(end).version)


def _position_in(unit: VersionFiles, index: int, start: Position) -> Position:
    snapshot = start.snapshot and unit.version == start.version
    return Position(unit.version, index, snapshot)


def _at_or_after(unit: VersionFiles, index: int, stop: Position) -> bool:
    """Whether file ``index`` of ``unit`` is at or past the end offset ``stop`` (files are
    ordered by version, then index; a snapshot is the only unit of its version)."""
    return (unit.version, index) >= (stop.version, stop.index)
