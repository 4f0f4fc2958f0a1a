"""The recipient side of Delta Sharing: read shared tables as Arrow, pandas or polars.

The module-level loaders have the official ``delta_sharing`` package's names and
arguments; [`SharingClient`][deltaport.client.SharingClient] lists what a profile can see and hands
out table handles whose scans read files in parallel, refreshing expired URLs as they go.

Everything a program (such as the Spark connector) needs is exported here; the
submodules are private. Beyond loaders and scans, the building blocks for reading a
plan's files elsewhere (on other processes or machines) are public too:

- ``TableHandle.snapshot(...).plan()``, ``TableHandle.changes(...).plan()`` and
  ``TableHandle.files_since(...)`` return a picklable [`ScanPlan`][deltaport.client.ScanPlan] of
  [`RemoteFile`][deltaport.client.RemoteFile] objects;
  [`SharingClient.refresh_plan`][deltaport.client.SharingClient.refresh_plan] renews its URLs;
- [`read_remote_file`][deltaport.client.read_remote_file] reads one file of a plan as Arrow batches
  (pass it a pooled HTTP client from [`new_http_client`][deltaport.client.new_http_client] when
  reading many), and [`is_expired`][deltaport.client.is_expired] tells whether its URL must be
  renewed first;
- [`plan_file_reader`][deltaport.client.plan_file_reader] splits that in two:
  [`FileReader.fetch`][deltaport.client.FileReader.fetch] downloads a file (and its deletion
  vector), [`FileReader.batches`][deltaport.client.FileReader.batches] decodes it batch by batch;
- [`batched_files`][deltaport.client.batched_files] groups a plan's files that its server can send
  together, and [`fetched_in_batch`][deltaport.client.fetched_in_batch] fetches such a group in one
  request (None for each file to fetch on its own);
- [`ordered_map`][deltaport.client.ordered_map] maps a function over files on threads, yielding in
  order;
- [`Metadata`][deltaport.client.Metadata] and [`Protocol`][deltaport.client.Protocol] are the
  table's Delta metadata and protocol.
"""

from deltaport.client.base.errors import (
    ProfileExpiredError,
    ResponseError,
    SharingError,
    UrlExpiredError,
)
from deltaport.client.base.models import (
    QuerySpec,
    RemoteFile,
    ScanPlan,
    Schema,
    Share,
    Table,
    TableInfo,
)
from deltaport.client.files.fetch import is_expired
from deltaport.client.files.file_batches import batched_files, fetched_in_batch
from deltaport.client.files.remote_file import (
    FetchedFile,
    FileReader,
    plan_file_reader,
    read_remote_file,
)
from deltaport.client.files.scan import TableScan
from deltaport.client.loaders import (
    get_table_metadata,
    get_table_protocol,
    get_table_version,
    load_as_arrow,
    load_as_pandas,
    load_as_polars,
    load_table_changes_as_arrow,
    load_table_changes_as_pandas,
    load_table_changes_as_polars,
)
from deltaport.client.remote.rest import new_http_client
from deltaport.client.remote.retry import RetryPolicy
from deltaport.client.sharing_client import SharingClient
from deltaport.client.table import TableHandle
from deltaport.delta.model import Metadata, Protocol
from deltaport.read.prefetch import ordered_map

__all__ = [
    "FetchedFile",
    "FileReader",
    "Metadata",
    "ProfileExpiredError",
    "Protocol",
    "QuerySpec",
    "RemoteFile",
    "ResponseError",
    "RetryPolicy",
    "ScanPlan",
    "Schema",
    "Share",
    "SharingClient",
    "SharingError",
    "Table",
    "TableHandle",
    "TableInfo",
    "TableScan",
    "UrlExpiredError",
    "batched_files",
    "fetched_in_batch",
    "get_table_metadata",
    "get_table_protocol",
    "get_table_version",
    "is_expired",
    "load_as_arrow",
    "load_as_pandas",
    "load_as_polars",
    "load_table_changes_as_arrow",
    "load_table_changes_as_pandas",
    "load_table_changes_as_polars",
    "new_http_client",
    "ordered_map",
    "plan_file_reader",
    "read_remote_file",
]
