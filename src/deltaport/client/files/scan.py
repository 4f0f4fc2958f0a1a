"""A scan of a snapshot or a change range: its plan, and its rows as Arrow batches read
in parallel, in file order, with URLs refreshed when they expire mid-read."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence

import pyarrow as pa

from deltaport.client.base.errors import UrlExpiredError
from deltaport.client.base.models import QuerySpec, RemoteFile, ScanPlan
from deltaport.client.files.arrow_scan import ArrowScan
from deltaport.client.files.downloads import downloads_for
from deltaport.client.files.fetch import is_expired
from deltaport.client.files.file_batches import batched_files, fetched_in_batch
from deltaport.client.files.progress import LOAD_DELAY, ProgressLine, progress_wanted
from deltaport.client.files.remote_file import FetchedFile, FileReader
from deltaport.client.remote.planning import fetch_plan, refresh_plan
from deltaport.client.remote.rest import RestClient
from deltaport.protocol.predicates import Expr, parse_json_predicate, referenced_columns
from deltaport.read import EncodedBatch, FileEncoding, FileRows, ReadPlan
from deltaport.read.prefetch import ordered_map

DEFAULT_CONCURRENCY = 16
BATCH_ROWS = 1 << 20
"""Rows per batch read from a file: large batches make few chunks, so converting the
result to pandas or polars needs no concatenation of many small pieces."""
MAX_URL_REFRESHES = 3
BATCHES_PER_DECODER = 2
"""File batches fetched and decoded at once, per decoding core: one decoding while the
next downloads. More only fight over the GIL (measured on 2 cores with 2,000 small files:
16 at once took 15% longer than 4)."""


def decoders() -> int:
    """How many files of a scan are decoded at once: one per core. All ``concurrency``
    threads download, but decoding is CPU work, and more threads than cores decoding at
    once only fight over the GIL (measured on 2 cores with 16 threads: 8-11% slower)."""
    return os.cpu_count() or 1


FileBatches = tuple[FileEncoding, list[pa.RecordBatch]]
FileDone = Callable[[RemoteFile, int], None]
"""Called (on the consuming thread) after each file's rows were handed out."""


class FreshFiles:
    """The current (most recently refreshed) version of each file of a plan."""

    def __init__(self, rest: RestClient, plan: ScanPlan) -> None:
        self._rest = rest
        self._plan = plan
        self._lock = threading.Lock()
        self._by_key = {f.key: f for f in plan.files}
        self.refreshes = 0

    def current(self, file: RemoteFile) -> RemoteFile:
        with self._lock:
            return self._by_key[file.key]

    def renew(self, stale: RemoteFile) -> RemoteFile:
        """A fresh copy of ``stale``; asks the server only if nobody did since."""
        with self._lock:
            if self._by_key[stale.key] is stale:
                self._plan = refresh_plan(self._rest, self._plan)
                self._by_key = {f.key: f for f in self._plan.files}
                self.refreshes += 1
            return self._by_key[stale.key]


class TableScan(ArrowScan):
    """Rows of one query. Nothing is asked of the server until the plan is needed."""

    def __init__(
        self,
        rest: RestClient,
        query: QuerySpec,
        *,
        predicate: str | None = None,
        limit: int | None = None,
        columns: Sequence[str] | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
    ) -> None:
        if limit is not None and limit < 0:
            raise ValueError("'limit' must be a non-negative int")
        self._rest = rest
        self._query = query
        self._predicate: Expr | None = parse_json_predicate(predicate) if predicate else None
        self._limit = limit
        self._columns = tuple(columns) if columns is not None else None
        self._concurrency = max(1, concurrency)
        self._plan: ScanPlan | None = None
        self.url_refreshes = 0
        self.progress: bool | None = False
        """Draw a progress line on stderr for a read longer than a moment: True, False,
        or None for when stderr is a terminal or a notebook (and ``DELTAPORT_PROGRESS``
        is not ``0``). The loaders pass their ``progress`` argument here."""

    @classmethod
    def of_plan(
        cls,
        rest: RestClient,
        plan: ScanPlan,
        *,
        columns: Sequence[str] | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
    ) -> TableScan:
        """A scan of the files of a plan fetched before (such as some of its files only);
        their URLs are refreshed through the plan's query when they expire."""
        scan = cls(rest, plan.query, columns=columns, concurrency=concurrency)
        scan._plan = plan
        return scan

    def plan(self) -> ScanPlan:
        """The files to read (asked of the server once, then kept)."""
        if self._plan is None:
            self._plan = fetch_plan(self._rest, self._query)
        return self._plan

    @property
    def schema(self) -> pa.Schema:
        plan = self.plan()
        return ReadPlan.build(plan.metadata, columns=self._columns, cdf=plan.cdf).schema

    def _reader(self, plan: ScanPlan) -> FileReader:
        """Reads the asked columns plus those the row filter needs (dropped afterwards)."""
        read_columns = self._columns
        if read_columns is not None and self._predicate is not None:
            extra = [c.name.split(".")[0] for c in referenced_columns(self._predicate)]
            read_columns = tuple(dict.fromkeys([*read_columns, *extra]))
        read_plan = ReadPlan.build(plan.metadata, columns=read_columns, cdf=plan.cdf)
        output = self.schema.names if read_columns != self._columns else None
        return FileReader(
            read_plan,
            downloads_for(self._rest.http),
            self._rest.retry,
            predicate=self._predicate,
            output=tuple(output) if output is not None else None,
            batch_size=BATCH_ROWS,
        )

    def to_batches(self, on_file: FileDone | None = None) -> Iterator[pa.RecordBatch]:
        """Record batches in file order; files are fetched ``concurrency`` at a time
        (decoded ``decoders`` at a time) and only a bounded number ahead of the
        consumer."""
        return (item.batch for item in self.encoded_batches(on_file))

    def encoded_batches(self, on_file: FileDone | None = None) -> Iterator[EncodedBatch]:
        """As [`to_batches`][deltaport.client.TableScan.to_batches], each batch with the
        encoding of the file it comes from."""
        plan = self.plan()
        if self._limit == 0 or not plan.files:
            return
        line = None
        if on_file is None and progress_wanted(self.progress):
            line = ProgressLine(len(plan.files), sum(f.size for f in plan.files), delay=LOAD_DELAY)
            on_file = line.file_done
        reader = self._reader(plan)
        fresh = FreshFiles(self._rest, plan)
        decoding = threading.BoundedSemaphore(decoders())
        batching = threading.BoundedSemaphore(BATCHES_PER_DECODER * decoders())

        def decoded_together(
            files: list[tuple[RemoteFile, FetchedFile]],
        ) -> list[tuple[RemoteFile, FileBatches]]:
            with decoding:  # once for a batch's files: a hand-over each costs more than one
                return [(file, _decoded(reader.rows(fetched))) for file, fetched in files]

        def read(file: RemoteFile) -> tuple[RemoteFile, FileBatches]:
            current = fresh.current(file)
            if is_expired(current):
                current = fresh.renew(current)
            refreshes = 0
            while True:
                try:
                    fetched = reader.fetch(current)
                    break
                except UrlExpiredError:
                    refreshes += 1
                    if refreshes > MAX_URL_REFRESHES:
                        raise
                    current = fresh.renew(current)
            return decoded_together([(file, fetched)])[0]

        def read_group(group: tuple[RemoteFile, ...]) -> list[tuple[RemoteFile, FileBatches]]:
            """The files of ``group``: in one batch request when there are several (each
            file the batch did not deliver is then read on its own)."""
            current = [fresh.current(file) for file in group]
            if len(group) == 1 or plan.file_batch_url is None or any(map(is_expired, current)):
                return [read(file) for file in group]
            with batching:
                return read_batch(plan.file_batch_url, group, current)

        def read_batch(
            batch_url: str, group: tuple[RemoteFile, ...], current: list[RemoteFile]
        ) -> list[tuple[RemoteFile, FileBatches]]:
            results: list[tuple[RemoteFile, FileBatches] | None] = []
            delivered: list[tuple[RemoteFile, FetchedFile]] = []
            for file, fetched in zip(
                group, fetched_in_batch(reader, batch_url, current), strict=True
            ):
                if fetched is None:
                    results.append(read(file))
                else:
                    delivered.append((file, fetched))
                    results.append(None)  # decoded below, with the others
            decoded_files = iter(decoded_together(delivered))
            return [result or next(decoded_files) for result in results]

        remaining = self._limit
        window = self._concurrency + self._concurrency // 2
        groups = batched_files(plan.files, plan.file_batch_url)
        try:
            for group in ordered_map(read_group, groups, workers=self._concurrency, window=window):
                for file, (encoding, batches) in group:
                    rows = 0
                    for batch in batches:
                        if remaining is not None and batch.num_rows >= remaining:
                            batch = batch.slice(0, remaining)
                        rows += batch.num_rows
                        if remaining is not None:
                            remaining -= batch.num_rows
                        if batch.num_rows:
                            yield EncodedBatch(batch, encoding)
                        if remaining == 0:
                            break
                    if on_file is not None:
                        on_file(file, rows)
                    if remaining == 0:
                        return
        finally:
            self.url_refreshes += fresh.refreshes
            if line is not None:
                line.close()


def _decoded(rows: FileRows) -> FileBatches:
    return rows.encoding, list(rows.batches)
