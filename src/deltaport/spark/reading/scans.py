"""Driver side: asking the server for the files of a batch read (a snapshot, a version
or timestamp of it, or a change data feed range), and the Arrow schema of the result."""

from __future__ import annotations

import pyarrow as pa

from deltaport.client import ScanPlan, TableHandle, TableScan
from deltaport.read import table_arrow_schema
from deltaport.spark.base.connection import open_table
from deltaport.spark.base.options import OptionError, SharingOptions
from deltaport.spark.reading.directory import DirectoryPlan, plan_directory


def plan_batch(options: SharingOptions, predicate: str | None = None) -> ScanPlan | DirectoryPlan:
    """The files of the read the options ask for (``predicate``: JSON hint for the server,
    or for skipping files in directory mode)."""
    with open_table(options) as table:
        directory = table.directory()
        if directory is not None:
            if options.read_change_feed:
                _check_range(options)
            return plan_directory(table, directory, options, predicate)
        if options.read_change_feed:
            return plan_changes(table, options)
        scan = table.snapshot(
            version=options.version_as_of,
            timestamp=options.timestamp_as_of,
            predicate=predicate,
            use_delta_format=options.use_delta_format,
            async_query=options.async_query,
        )
        assert isinstance(scan, TableScan)
        return scan.plan()


def _check_range(options: SharingOptions) -> None:
    if options.starting_version is None and options.starting_timestamp is None:
        raise OptionError("readChangeFeed needs startingVersion or startingTimestamp")


def plan_changes(table: TableHandle, options: SharingOptions) -> ScanPlan:
    _check_range(options)
    scan = table.changes(
        starting_version=options.starting_version,
        ending_version=options.ending_version,
        starting_timestamp=options.starting_timestamp,
        ending_timestamp=options.ending_timestamp,
        use_delta_format=options.use_delta_format,
    )
    assert isinstance(scan, TableScan)  # the caller reads in url mode
    return scan.plan()


def read_schema(options: SharingOptions) -> pa.Schema:
    """The Arrow schema of the rows the options' read (or stream) produces: the schema
    of the version read, of the end of a change range, or else of the latest version."""
    with open_table(options) as table:
        directory = table.directory()
        if directory is not None and (
            options.time_travel or (options.read_change_feed and _has_end(options))
        ):
            metadata = plan_directory(table, directory, options, None).read.metadata
        elif options.time_travel:
            scan = table.snapshot(
                version=options.version_as_of,
                timestamp=options.timestamp_as_of,
                limit=1,
                use_delta_format=options.use_delta_format,
            )
            assert isinstance(scan, TableScan)
            metadata = scan.plan().metadata
        elif options.read_change_feed and _has_end(options):
            metadata = plan_changes(table, options).metadata
        else:
            metadata = table.metadata(options.use_delta_format)
    return table_arrow_schema(metadata, cdf=options.read_change_feed)


def _has_end(options: SharingOptions) -> bool:
    return options.ending_version is not None or options.ending_timestamp is not None
