"""Executor side: reading the files of one input partition as Arrow batches of exactly
the schema declared to Spark, refreshing pre-signed URLs that expired since planning
(a DataFrame's plan is kept by Spark and may be run again hours later)."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pyarrow as pa

from deltaport.client import (
    FetchedFile,
    RemoteFile,
    ScanPlan,
    SharingClient,
    UrlExpiredError,
    batched_files,
    fetched_in_batch,
    is_expired,
    new_http_client,
    ordered_map,
    plan_file_reader,
)
from deltaport.protocol.profile import Profile

FETCH_THREADS = 2
"""Files of one partition downloaded ahead at once. Spark already runs a task on every
core: more threads per task only share the same cores (measured: 4 threads held a task's
first batch back about twice as long as 2, with no gain in throughput)."""


def read_plan_files(
    plan: ScanPlan, profile: Profile, schema: pa.Schema
) -> Iterator[pa.RecordBatch]:
    """The rows of every file of ``plan``, in order, as batches of ``schema``.

    Downloads run ahead on threads (small files many at a time, where the server sends
    file batches); each file is decoded batch by batch as Spark takes
    the batches, so a task holds one decoded batch at a time rather than whole files
    (two whole files decoded ahead cost two files of decoded rows per task)."""
    http = new_http_client(max_connections=FETCH_THREADS + 2)
    reader = plan_file_reader(plan, http)
    urls = FreshUrls(plan, profile)

    def fetch(file: RemoteFile) -> FetchedFile:
        current = urls.current(file)
        try:
            return reader.fetch(current)
        except UrlExpiredError:
            return reader.fetch(urls.renew(current))

    def fetch_group(group: tuple[RemoteFile, ...]) -> list[FetchedFile]:
        """The files of ``group``, in one batch request where the server offers it."""
        batch_url = plan.file_batch_url
        if len(group) == 1 or batch_url is None:
            return [fetch(file) for file in group]
        batch = fetched_in_batch(reader, batch_url, [urls.current(file) for file in group])
        return [got or fetch(file) for file, got in zip(group, batch, strict=True)]

    groups = batched_files(plan.files, plan.file_batch_url)
    try:
        for fetched_group in ordered_map(
            fetch_group, groups, workers=FETCH_THREADS, window=FETCH_THREADS
        ):
            for fetched in fetched_group:
                for batch in reader.batches(fetched):
                    yield conform(batch, schema)
    finally:
        http.close()


class FreshUrls:
    """The newest URL of each file known to this task; the server is asked again at most
    once per expiry, however many threads find a URL expired."""

    def __init__(self, plan: ScanPlan, profile: Profile) -> None:
        self._plan = plan
        self._profile = profile
        self._lock = threading.Lock()
        self._by_key = {f.key: f for f in plan.files}

    def current(self, file: RemoteFile) -> RemoteFile:
        with self._lock:
            current = self._by_key[file.key]
        return self.renew(current) if is_expired(current) else current

    def renew(self, stale: RemoteFile) -> RemoteFile:
        with self._lock:
            if self._by_key[stale.key] is stale:
                with SharingClient(self._profile, concurrency=1) as client:
                    self._plan = client.refresh_plan(self._plan)
                self._by_key = {f.key: f for f in self._plan.files}
            return self._by_key[stale.key]


def conform(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """``batch`` with exactly ``schema``'s types (Spark rejects any other)."""
    if batch.schema.equals(schema):
        return batch
    if batch.schema.names != schema.names:
        batch = batch.select(schema.names)
    return batch.cast(schema)
