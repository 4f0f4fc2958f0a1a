"""Executor side: reading the files of one input partition as Arrow batches of exactly
the schema declared to Spark, refreshing pre-signed URLs that expired since planning
(a DataFrame's plan is kept by Spark and may be run again hours later)."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pyarrow as pa

from deltaport.client import (
    RemoteFile,
    ScanPlan,
    SharingClient,
    UrlExpiredError,
    is_expired,
    new_http_client,
    ordered_map,
    read_remote_file,
)
from deltaport.protocol.profile import Profile

FETCH_THREADS = 2
"""Files of one partition downloaded and decoded at once (batches are still yielded in
file order). Spark already runs a task on every core: more threads per task only share
the same cores, and Spark then waits longer for the first batch (measured: 4 threads
held a task's first batch back about twice as long as 2, with no gain in throughput)."""


def read_plan_files(
    plan: ScanPlan, profile: Profile, schema: pa.Schema
) -> Iterator[pa.RecordBatch]:
    """The rows of every file of ``plan``, in order, as batches of ``schema``."""
    http = new_http_client(max_connections=FETCH_THREADS + 2)
    urls = FreshUrls(plan, profile)

    def read(file: RemoteFile) -> list[pa.RecordBatch]:
        current = urls.current(file)
        try:
            return list(read_remote_file(current, plan, http=http))
        except UrlExpiredError:
            return list(read_remote_file(urls.renew(current), plan, http=http))

    try:
        for batches in ordered_map(read, plan.files, workers=FETCH_THREADS, window=FETCH_THREADS):
            for batch in batches:
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
