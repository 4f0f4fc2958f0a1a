"""Structured streaming: ``spark.readStream.format("deltaSharing")``.

The stream reads the table's snapshot at its latest version first (unless a starting
version or timestamp is given), then the files each later version adds, or with
``readChangeFeed`` the change data of each version. Micro-batches are cut by
``maxFilesPerTrigger`` / ``maxBytesPerTrigger``; ``Trigger.AvailableNow`` reads up to the
version current when the query started, in as many batches as those limits make.

In ``dir`` access mode the files of each version come from the Delta log, read with vended
credentials (``deltaport.spark.streaming.dir_versions``); offsets then say ``"mode": "dir"``,
because files within a version are ordered differently in the two modes.
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

from deltaport.protocol.credentials import URL
from deltaport.spark.base.connection import connect
from deltaport.spark.base.options import OptionError, SharingOptions
from deltaport.spark.reading.directory import DirectoryPartition, read_directory_files
from deltaport.spark.reading.file_reading import read_plan_files
from deltaport.spark.reading.partitions import FilesPartition
from deltaport.spark.streaming.dir_versions import DirectoryVersionFiles, DirectoryVersionSource
from deltaport.spark.streaming.offsets import Position
from deltaport.spark.streaming.versions import StreamError, VersionFiles, VersionSource

StreamUnit = VersionFiles | DirectoryVersionFiles
StreamSource = VersionSource | DirectoryVersionSource

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

    def admits(self, size: int) -> bool:
        if self.taken_files == 0:
            return True
        if self.files is not None and self.taken_files >= self.files:
            return False
        return self.bytes is None or self.taken_bytes + size <= self.bytes

    def take(self, size: int) -> None:
        self.taken_files += 1
        self.taken_bytes += size


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
        self._source: StreamSource | None = None
        self._latest: int | None = None
        self._checked_at = 0.0
        self._target: int | None = None

    @property
    def source(self) -> StreamSource:
        """Where the files of versions come from, chosen on first use (on the driver;
        executors only read the partitions they are handed)."""
        if self._source is None:
            self._source = open_source(self.options, self.schema)
        return self._source

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_source"] = None  # the open client stays on the driver
        return state

    def stop(self) -> None:
        if self._source is not None:
            self._source.close()
            self._source = None

    def _position(self, version: int, index: int = 0, snapshot: bool = False) -> Position:
        return Position(version, index, snapshot, self.source.mode)

    def _resume(self, offset: dict[str, Any]) -> Position:
        """The position of an offset from Spark (or a checkpoint), in this stream's mode;
        a position inside a version read in the other mode cannot be carried over."""
        position = Position.from_offset(offset)
        mode = self.source.mode
        if position.mode == mode:
            return position
        if position.index == 0 and not position.snapshot:
            return dataclasses.replace(position, mode=mode)
        raise StreamError(
            f"the checkpoint stopped inside version {position.version}, read in "
            f"{position.mode} access mode; files within a version are ordered differently in "
            f"{mode} mode. Resume with accessMode={position.mode}, or start a new checkpoint"
        )

    # -- offsets ----------------------------------------------------------------------
    def initialOffset(self) -> dict[str, Any]:
        o = self.options
        if o.starting_version is not None:
            return self._position(o.starting_version).to_offset()
        if o.starting_timestamp is not None:
            return self._position(self.source.version_at(o.starting_timestamp)).to_offset()
        latest = self._latest_version(fresh=True)
        if o.starting_version_latest:
            return self._position(latest + 1).to_offset()
        return self._position(latest, 0, snapshot=True).to_offset()

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
        position = self._resume(start)
        latest = self._latest_version()
        for unit, first in self._units(position, latest):
            sizes = unit.sizes
            for index in range(first, len(sizes)):
                if not budget.admits(sizes[index]):
                    return _position_in(unit, index, position).to_offset()
                budget.take(sizes[index])
            position = self._position(unit.version + 1)
        return position.to_offset()

    def reportLatestOffset(self) -> dict[str, Any] | None:
        latest = self._target if self._target is not None else self._latest
        return None if latest is None else self._position(latest + 1).to_offset()

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

    def _units(self, position: Position, latest: int) -> Iterator[tuple[StreamUnit, int]]:
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
        begin, stop = self._resume(start), self._resume(end)
        if begin == stop:
            return []
        partitions: list[InputPartition] = []
        last = stop.version if stop.index > 0 else stop.version - 1
        for unit, first in self._units(begin, last):
            if _at_or_after(unit, 0, stop):
                break
            chosen = [i for i in range(first, len(unit.sizes)) if not _at_or_after(unit, i, stop)]
            if chosen:
                partitions.extend(
                    self.source.partitions(
                        unit,  # type: ignore[arg-type]  # each source plans its own units
                        chosen,
                        self.options.partition_bytes,
                        self.options.min_partitions,
                    )
                )
        return partitions

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if isinstance(partition, DirectoryPartition):
            return read_directory_files(partition.plan, self.options, self.schema)
        assert isinstance(partition, FilesPartition)
        return read_plan_files(partition.plan, self.options.profile, self.schema)

    def commit(self, end: dict[str, Any]) -> None:
        self.source.forget_before(self._resume(end).version)


def open_source(options: SharingOptions, schema: pa.Schema) -> StreamSource:
    """The stream's source in the mode the options (or the profile) ask for: ``dir`` when
    the table is read in directory mode, else ``url``."""
    if (options.access_mode or options.profile.access_mode or URL) == URL:
        return VersionSource(options, schema)
    client = connect(options)
    try:
        directory = client.table(options.table).directory()
    except BaseException:
        client.close()
        raise
    if directory is None:
        client.close()
        return VersionSource(options, schema)
    return DirectoryVersionSource(client, directory, options, schema)


def _position_in(unit: StreamUnit, index: int, start: Position) -> Position:
    snapshot = start.snapshot and unit.version == start.version
    return Position(unit.version, index, snapshot, start.mode)


def _at_or_after(unit: StreamUnit, index: int, stop: Position) -> bool:
    """Whether file ``index`` of ``unit`` is at or past the end offset ``stop`` (files are
    ordered by version, then index; a snapshot is the only unit of its version)."""
    return (unit.version, index) >= (stop.version, stop.index)
