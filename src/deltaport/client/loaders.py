"""The official client's module-level functions, same names and arguments: switching is
a one-line import change. ``url`` is ``<profile file>#<share>.<schema>.<table>``.

The loaders of rows also take ``access_mode`` (``url``, ``dir`` or ``auto``; default the
profile's ``accessMode``, else ``url``; see
[`deltaport.client.SharingClient`][deltaport.client.SharingClient]) and ``storage_options`` (obstore
options for directory mode that override the endpoint and region the server tells, or supply them
where it tells none), and ``progress``: a progress line on stderr (files, bytes, rows) for a
load that runs longer than a second, in ``url`` mode. Default (None): when stderr is a terminal or
a notebook, unless the environment variable ``DELTAPORT_PROGRESS`` is ``0``; True or False
decides."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, TypeVar

import pyarrow as pa

from deltaport.client.access import AccessMode
from deltaport.client.base.models import Table
from deltaport.client.files.arrow_scan import ArrowScan
from deltaport.client.files.scan import TableScan
from deltaport.client.official_types import official_frame, whole_second_commit_times
from deltaport.client.sharing_client import SharingClient
from deltaport.client.table import TableHandle
from deltaport.delta.model import Metadata, Protocol
from deltaport.protocol.capabilities import PARQUET
from deltaport.protocol.profile import split_table_url

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl

T = TypeVar("T")


def _with_table(
    url: str,
    use: Callable[[TableHandle], T],
    access_mode: AccessMode | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> T:
    profile, share, schema, name = split_table_url(url)
    with SharingClient(profile, access_mode=access_mode, storage_options=storage_options) as client:
        return use(client.table(Table(name, share, schema)))


def _snapshot(
    url: str,
    limit: int | None,
    version: int | None,
    timestamp: str | None,
    json_predicate_hints: str | None,
    use_delta_format: bool | None,
    convert: Callable[[ArrowScan], T],
    access_mode: AccessMode | None,
    storage_options: Mapping[str, str] | None,
    progress: bool | None,
) -> T:
    return _with_table(
        url,
        lambda t: convert(
            _shown(
                t.snapshot(version, timestamp, json_predicate_hints, limit, use_delta_format),
                progress,
            )
        ),
        access_mode,
        storage_options,
    )


def load_as_arrow(
    url: str,
    limit: int | None = None,
    version: int | None = None,
    timestamp: str | None = None,
    jsonPredicateHints: str | None = None,
    use_delta_format: bool | None = None,
    access_mode: AccessMode | None = None,
    storage_options: Mapping[str, str] | None = None,
    progress: bool | None = None,
) -> pa.Table:
    """The table (at ``version`` or ``timestamp``; default latest) as an Arrow table,
    ``jsonPredicateHints`` and ``limit`` applied to the rows."""
    return _snapshot(
        url,
        limit,
        version,
        timestamp,
        jsonPredicateHints,
        use_delta_format,
        ArrowScan.to_arrow,
        access_mode,
        storage_options,
        progress,
    )


def load_as_pandas(
    url: str,
    limit: int | None = None,
    version: int | None = None,
    timestamp: str | None = None,
    jsonPredicateHints: str | None = None,
    use_delta_format: bool | None = None,
    convert_in_batches: bool = False,
    access_mode: AccessMode | None = None,
    storage_options: Mapping[str, str] | None = None,
    arrow_types: bool = False,
    progress: bool | None = None,
) -> pd.DataFrame:
    """As [`load_as_arrow`][deltaport.client.load_as_arrow], as a pandas DataFrame typed
    as the official client types it: when the answer is in the parquet format (in
    ``dir`` mode: unless ``use_delta_format`` is true), each column as its data files hold
    it (Spark's timestamps: naive UTC nanoseconds; see
    ``deltaport.client.official_types``). ``arrow_types`` gives pandas' conversion of
    the Arrow table instead (UTC timestamps throughout). ``convert_in_batches`` is accepted
    for compatibility; files are always read batch by batch."""

    def convert(scan: ArrowScan) -> pd.DataFrame:
        if arrow_types or not _parquet_answer(scan, use_delta_format):
            return scan.to_pandas()
        return official_frame(scan.encoded_batches(), scan.schema, commit_timestamp_ms=False)

    return _snapshot(
        url,
        limit,
        version,
        timestamp,
        jsonPredicateHints,
        use_delta_format,
        convert,
        access_mode,
        storage_options,
        progress,
    )


def _shown(scan: T, progress: bool | None) -> T:
    """``scan`` drawing its progress as asked (url mode: files are counted as read)."""
    if isinstance(scan, TableScan):
        scan.progress = progress
    return scan


def _parquet_answer(scan: ArrowScan, use_delta_format: bool | None) -> bool:
    """Whether the official client would have read these rows through its parquet path
    (its delta path converts the Arrow table as it is, like ``arrow_types``)."""
    if isinstance(scan, TableScan):
        return scan.plan().response_format == PARQUET
    return use_delta_format is not True


def load_as_polars(
    url: str,
    limit: int | None = None,
    version: int | None = None,
    timestamp: str | None = None,
    jsonPredicateHints: str | None = None,
    use_delta_format: bool | None = None,
    access_mode: AccessMode | None = None,
    storage_options: Mapping[str, str] | None = None,
    progress: bool | None = None,
) -> pl.DataFrame:
    """As [`load_as_arrow`][deltaport.client.load_as_arrow], as a polars DataFrame (needs
    ``polars``)."""
    return _snapshot(
        url,
        limit,
        version,
        timestamp,
        jsonPredicateHints,
        use_delta_format,
        ArrowScan.to_polars,
        access_mode,
        storage_options,
        progress,
    )


def _changes(
    url: str,
    starting_version: int | None,
    ending_version: int | None,
    starting_timestamp: str | None,
    ending_timestamp: str | None,
    use_delta_format: bool | None,
    convert: Callable[[ArrowScan], T],
    access_mode: AccessMode | None,
    storage_options: Mapping[str, str] | None,
    progress: bool | None,
) -> T:
    return _with_table(
        url,
        lambda t: convert(
            _shown(
                t.changes(
                    starting_version,
                    ending_version,
                    starting_timestamp,
                    ending_timestamp,
                    use_delta_format,
                ),
                progress,
            )
        ),
        access_mode,
        storage_options,
    )


def load_table_changes_as_arrow(
    url: str,
    starting_version: int | None = None,
    ending_version: int | None = None,
    starting_timestamp: str | None = None,
    ending_timestamp: str | None = None,
    use_delta_format: bool | None = None,
    access_mode: AccessMode | None = None,
    storage_options: Mapping[str, str] | None = None,
    progress: bool | None = None,
) -> pa.Table:
    """The change data feed between two versions or timestamps (inclusive), with
    ``_change_type``, ``_commit_version`` and ``_commit_timestamp``."""
    return _changes(
        url,
        starting_version,
        ending_version,
        starting_timestamp,
        ending_timestamp,
        use_delta_format,
        ArrowScan.to_arrow,
        access_mode,
        storage_options,
        progress,
    )


def load_table_changes_as_pandas(
    url: str,
    starting_version: int | None = None,
    ending_version: int | None = None,
    starting_timestamp: str | None = None,
    ending_timestamp: str | None = None,
    use_delta_format: bool | None = None,
    convert_in_batches: bool = False,
    access_mode: AccessMode | None = None,
    storage_options: Mapping[str, str] | None = None,
    arrow_types: bool = False,
    progress: bool | None = None,
) -> pd.DataFrame:
    """As [`load_table_changes_as_arrow`][deltaport.client.load_table_changes_as_arrow], as
    pandas, typed as the official client types it (see
    ``deltaport.client.official_types``): unless ``use_delta_format`` is true,
    ``_commit_timestamp`` is int64 epoch milliseconds and each column is typed as its data
    files hold it; with ``use_delta_format=True``, ``_commit_timestamp`` is in whole
    seconds. ``arrow_types`` gives pandas' conversion of the Arrow table instead (UTC
    timestamps throughout, to the microsecond). ``convert_in_batches`` is accepted for
    compatibility."""

    def convert(scan: ArrowScan) -> pd.DataFrame:
        if arrow_types:
            return scan.to_pandas()
        if use_delta_format is True:
            frame: pd.DataFrame = whole_second_commit_times(scan.to_arrow()).to_pandas()
            return frame
        return official_frame(scan.encoded_batches(), scan.schema, commit_timestamp_ms=True)

    return _changes(
        url,
        starting_version,
        ending_version,
        starting_timestamp,
        ending_timestamp,
        use_delta_format,
        convert,
        access_mode,
        storage_options,
        progress,
    )


def load_table_changes_as_polars(
    url: str,
    starting_version: int | None = None,
    ending_version: int | None = None,
    starting_timestamp: str | None = None,
    ending_timestamp: str | None = None,
    use_delta_format: bool | None = None,
    access_mode: AccessMode | None = None,
    storage_options: Mapping[str, str] | None = None,
    progress: bool | None = None,
) -> pl.DataFrame:
    """As [`load_table_changes_as_arrow`][deltaport.client.load_table_changes_as_arrow], as
    polars."""
    return _changes(
        url,
        starting_version,
        ending_version,
        starting_timestamp,
        ending_timestamp,
        use_delta_format,
        ArrowScan.to_polars,
        access_mode,
        storage_options,
        progress,
    )


def get_table_version(url: str, starting_timestamp: str | None = None) -> int:
    """The latest version, or the first version at or after ``starting_timestamp``."""
    return _with_table(url, lambda t: t.version(starting_timestamp))


def get_table_metadata(url: str, use_delta_format: bool = True) -> Metadata:
    return _with_table(url, lambda t: t.metadata(use_delta_format))


def get_table_protocol(url: str, use_delta_format: bool = True) -> Protocol:
    return _with_table(url, lambda t: t.protocol(use_delta_format))
