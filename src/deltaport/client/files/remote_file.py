"""Reading one remote file as record batches of the table's logical schema.

Usable on its own (for example on a Spark executor): it fetches the file and its
deletion vector, and hands the bytes to the shared per-file reader of ``deltaport.read``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import httpx
import numpy as np
import pyarrow as pa

from deltaport.client.base.models import RemoteFile, ScanPlan
from deltaport.client.files.downloads import Downloads, downloads_for
from deltaport.client.files.fetch import fetch_deletion_vector, fetch_url
from deltaport.client.remote.rest import new_http_client
from deltaport.client.remote.retry import RetryPolicy
from deltaport.delta.model import DeletionVector, Metadata
from deltaport.protocol.predicates import Expr, evaluate_rows
from deltaport.read import (
    DEFAULT_BATCH_SIZE,
    ChangeInfo,
    FileRows,
    ReadPlan,
    RowIndexes,
    RowSelection,
    open_data_file,
    parse_partition_values,
    serialised_values,
)


@dataclass(frozen=True)
class FetchedFile:
    """A downloaded data file with the rows its deletion vectors keep."""

    file: RemoteFile
    data: bytes
    rows: RowSelection


@dataclass(frozen=True)
class FileReader:
    """How a scan reads each of its files: output columns, row filter, downloads."""

    plan: ReadPlan
    downloads: Downloads
    retry: RetryPolicy
    predicate: Expr | None = None
    output: tuple[str, ...] | None = None
    """Columns to keep after filtering (the plan may hold extra ones the filter needs)."""
    batch_size: int = DEFAULT_BATCH_SIZE

    def fetch(self, file: RemoteFile) -> FetchedFile:
        """Download ``file`` and its deletion vector, without decoding anything."""
        data, _ = fetch_url(self.downloads, file.url, self.retry)
        return self.fetched(file, data)

    def fetched(self, file: RemoteFile, data: bytes) -> FetchedFile:
        """``file`` with its ``data`` downloaded elsewhere (its deletion vector now)."""
        return FetchedFile(file, data, self.selection(file))

    def batches(self, fetched: FetchedFile) -> Iterator[pa.RecordBatch]:
        """Decode a fetched file batch by batch, filtered (only one decoded batch at a
        time is held: streaming a big file needs no memory for all of its rows)."""
        yield from self.rows(fetched).batches

    def rows(self, fetched: FetchedFile) -> FileRows:
        """As [`batches`][deltaport.client.FileReader.batches], with the file's own
        encoding of the columns (its types before the cast to the table's)."""
        file = fetched.file
        opened = open_data_file(
            fetched.data,
            self.plan,
            self._partition_scalars(file),
            fetched.rows,
            partition_values=serialised_values(file.partition_values, self.plan.partition_fields),
            change=_change_info(file) if self.plan.cdf else None,
            batch_size=self.batch_size,
        )
        return FileRows(opened.encoding, self._filtered(opened.batches))

    def _filtered(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            if self.predicate is not None:
                batch = batch.filter(evaluate_rows(self.predicate, batch))
            if self.output is not None:
                batch = batch.select(list(self.output))
            if batch.num_rows:
                yield batch

    def selection(self, file: RemoteFile) -> RowSelection:
        own = self._dv_rows(file.deletion_vector)
        if not (self.plan.cdf and file.has_partner):
            return RowSelection(deleted=own)
        partner = self._dv_rows(file.partner_deletion_vector)
        if partner is None:
            return RowSelection(selected=np.empty(0, dtype=np.uint64))
        if own is None:
            return RowSelection(selected=partner)
        return RowSelection(selected=np.setdiff1d(partner, own, assume_unique=True))

    def _dv_rows(self, dv: DeletionVector | None) -> RowIndexes | None:
        return None if dv is None else fetch_deletion_vector(self.downloads, dv, self.retry)

    def _partition_scalars(self, file: RemoteFile) -> dict[str, pa.Scalar]:
        values = file.partition_values
        scalars: dict[str, pa.Scalar] = {}
        for f in self.plan.partition_fields:
            raw = values.get(f.physical_name, values.get(f.name))
            scalars[f.name] = parse_partition_values(pa.array([raw], pa.string()), f.type)[0]
        return scalars


def _change_info(file: RemoteFile) -> ChangeInfo:
    return ChangeInfo(
        commit_version=file.version if file.version is not None else -1,
        commit_timestamp_ms=file.timestamp if file.timestamp is not None else 0,
        change_type=file.change_type,
    )


def read_remote_file(
    file: RemoteFile,
    plan_or_metadata: ScanPlan | Metadata,
    *,
    columns: Sequence[str] | None = None,
    cdf: bool | None = None,
    http: httpx.Client | None = None,
    retry: RetryPolicy | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> Iterator[pa.RecordBatch]:
    """Stream the rows of one file of a plan (deleted rows dropped, logical names, table
    types; with ``cdf`` the change columns). ``cdf`` defaults to the plan's kind.
    The URL is used as it is: refresh the plan first when it may have expired."""
    own_http = http is None
    client = new_http_client(max_connections=4) if http is None else http
    try:
        reader = plan_file_reader(
            plan_or_metadata, client, columns=columns, cdf=cdf, retry=retry, batch_size=batch_size
        )
        yield from reader.batches(reader.fetch(file))
    finally:
        if own_http:
            client.close()


def plan_file_reader(
    plan_or_metadata: ScanPlan | Metadata,
    http: httpx.Client,
    *,
    columns: Sequence[str] | None = None,
    cdf: bool | None = None,
    retry: RetryPolicy | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
) -> FileReader:
    """A reader of the files of a plan through ``http``, for callers that download
    ([`FileReader.fetch`][deltaport.client.FileReader.fetch]) apart from decoding
    ([`FileReader.batches`][deltaport.client.FileReader.batches]), such as several files fetched
    ahead on threads while one is decoded."""
    if isinstance(plan_or_metadata, ScanPlan):
        metadata = plan_or_metadata.metadata
        cdf = plan_or_metadata.cdf if cdf is None else cdf
    else:
        metadata = plan_or_metadata
    return FileReader(
        ReadPlan.build(metadata, columns=columns, cdf=bool(cdf)),
        downloads_for(http),
        retry or RetryPolicy(),
        batch_size=batch_size,
    )
