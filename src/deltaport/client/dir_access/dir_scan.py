"""A scan of a table read in directory mode: the same rows, in the same order, as the
``url`` mode's [`TableScan`][deltaport.client.TableScan] of the same query."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import pyarrow as pa

from deltaport.client.dir_access.directory import DirectoryRead
from deltaport.client.files.arrow_scan import ArrowScan
from deltaport.protocol.predicates import Expr, evaluate_rows, referenced_columns
from deltaport.read import EncodedBatch, ReadPlan, read_encoded_files
from deltaport.storage import Storage

BATCH_ROWS = 1 << 20


class DirectoryScan(ArrowScan):
    """Rows of one snapshot or change range; the log is read when first needed.

    ``predicate`` filters rows (after file skipping), then ``limit`` cuts them, as the
    url mode does on the client side."""

    def __init__(
        self,
        select: Callable[[], DirectoryRead],
        storage: Storage,
        *,
        predicate: Expr | None = None,
        limit: int | None = None,
        columns: Sequence[str] | None = None,
        concurrency: int = 16,
    ) -> None:
        if limit is not None and limit < 0:
            raise ValueError("'limit' must be a non-negative int")
        self._select = select
        self._storage = storage
        self._predicate = predicate
        self._limit = limit
        self._columns = tuple(columns) if columns is not None else None
        self._concurrency = max(1, concurrency)
        self._read: DirectoryRead | None = None

    def selected(self) -> DirectoryRead:
        """The files to read and their metadata (the log is read once, then kept)."""
        if self._read is None:
            self._read = self._select()
        return self._read

    @property
    def version(self) -> int:
        return self.selected().version

    @property
    def schema(self) -> pa.Schema:
        read = self.selected()
        return ReadPlan.build(read.metadata, columns=self._columns, cdf=read.cdf).schema

    def encoded_batches(self) -> Iterator[EncodedBatch]:
        read = self.selected()
        if self._limit == 0 or not read.files.num_rows:
            return
        columns = self._columns
        if columns is not None and self._predicate is not None:
            extra = [c.name.split(".")[0] for c in referenced_columns(self._predicate)]
            columns = tuple(dict.fromkeys([*columns, *extra]))
        output = self.schema.names if columns != self._columns else None
        batches = read_encoded_files(
            read.files,
            read.metadata,
            self._storage,
            columns=columns,
            cdf=read.cdf,
            batch_size=BATCH_ROWS,
            prefetch=self._concurrency,
        )
        remaining = self._limit
        for batch, encoding in batches:
            if self._predicate is not None:
                batch = batch.filter(evaluate_rows(self._predicate, batch))
            if output is not None:
                batch = batch.select(output)
            if remaining is not None and batch.num_rows >= remaining:
                batch = batch.slice(0, remaining)
            if remaining is not None:
                remaining -= batch.num_rows
            if batch.num_rows:
                yield EncodedBatch(batch, encoding)
            if remaining == 0:
                return
