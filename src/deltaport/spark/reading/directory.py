"""Batch reads in directory mode: the driver reads the Delta log with credentials the
server vended and hands each task its files with those credentials; a task whose
credentials are about to lapse (a long job, or a DataFrame run again later) asks the
server for new ones with the profile, as url-mode tasks do for expired URLs."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace

import pyarrow as pa
from pyspark.sql.datasource import InputPartition

from deltaport.client import SharingClient, TableHandle
from deltaport.client.base.models import Table
from deltaport.client.dir_access.dir_storage import DirectoryStorage
from deltaport.client.dir_access.directory import DirectoryRead, DirectoryTable
from deltaport.client.remote.credentials import (
    CredentialSource,
    VendedCredentials,
    request_credentials,
)
from deltaport.protocol.predicates import parse_json_predicate
from deltaport.protocol.profile import Profile
from deltaport.read import read_files
from deltaport.spark.base.options import SharingOptions
from deltaport.spark.reading.file_reading import FETCH_THREADS, conform
from deltaport.spark.reading.partitions import balanced_indexes
from deltaport.storage import parse_location


@dataclass(frozen=True)
class DirectoryPlan:
    """What a task needs to read its files: the credentials of every directory of the
    table (root first), the recipient's storage options, and its files."""

    credentials: tuple[VendedCredentials, ...]
    storage_options: Mapping[str, str]
    read: DirectoryRead


class DirectoryPartition(InputPartition):
    """The files one Spark task reads in directory mode."""

    def __init__(self, plan: DirectoryPlan) -> None:
        super().__init__(plan.read.files.num_rows)
        self.plan = plan

    def __repr__(self) -> str:
        return f"DirectoryPartition({self.plan.read.files.num_rows} files)"


def plan_directory(
    handle: TableHandle, directory: DirectoryTable, options: SharingOptions, predicate: str | None
) -> DirectoryPlan:
    """The read the options ask for, selected from the log on the driver."""
    if options.read_change_feed:
        read = directory.changes_read(
            options.starting_version,
            options.ending_version,
            options.starting_timestamp,
            options.ending_timestamp,
        )
    else:
        expr = parse_json_predicate(predicate) if predicate else None
        read = directory.snapshot_read(options.version_as_of, options.timestamp_as_of, expr)
    return DirectoryPlan(
        tuple(directory.credentials()), dict(handle.settings.storage_options), read
    )


def split_directory(
    plan: DirectoryPlan, target_bytes: int, min_partitions: int
) -> list[DirectoryPartition]:
    files = plan.read.files
    sizes = files.column("size").to_pylist()
    return [
        DirectoryPartition(replace(plan, read=replace(plan.read, files=files.take(group))))
        for group in balanced_indexes(sizes, target_bytes, min_partitions)
    ]


def read_directory_files(
    plan: DirectoryPlan, options: SharingOptions, schema: pa.Schema
) -> Iterator[pa.RecordBatch]:
    """The rows of the partition's files, read straight from storage, as ``schema``."""
    table = _table(options.table)
    sources = [
        CredentialSource(credentials, TaskRenewer(options.profile, table, credentials.location))
        for credentials in plan.credentials
    ]
    root = parse_location(plan.credentials[0].location)
    storage = DirectoryStorage(root, sources, plan.storage_options)
    read = plan.read
    for batch in read_files(
        read.files, read.metadata, storage, cdf=read.cdf, prefetch=FETCH_THREADS
    ):
        yield conform(batch, schema)


@dataclass(frozen=True)
class TaskRenewer:
    """A task's way to ask the server again for one directory's credential."""

    profile: Profile
    table: Table
    location: str

    def __call__(self) -> VendedCredentials:
        with SharingClient(self.profile, concurrency=1) as client:
            return request_credentials(client.rest, self.table, self.location)


def _table(name: str) -> Table:
    share, schema, table = name.split(".")
    return Table(table, share, schema)
