"""The recipient side of Delta Sharing: read shared tables as Arrow, pandas or polars.

The module-level loaders have the official ``delta_sharing`` package's names and
arguments; :class:`SharingClient` lists what a profile can see and hands out table
handles whose scans read files in parallel, refreshing expired URLs as they go.
"""

from deltaport.client.errors import (
    ProfileExpiredError,
    ResponseError,
    SharingError,
    UrlExpiredError,
)
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
from deltaport.client.models import QuerySpec, RemoteFile, ScanPlan, Schema, Share, Table
from deltaport.client.remote_file import read_remote_file
from deltaport.client.retry import RetryPolicy
from deltaport.client.scan import TableScan
from deltaport.client.sharing_client import SharingClient
from deltaport.client.table import TableHandle

__all__ = [
    "ProfileExpiredError",
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
    "TableScan",
    "UrlExpiredError",
    "get_table_metadata",
    "get_table_protocol",
    "get_table_version",
    "load_as_arrow",
    "load_as_pandas",
    "load_as_polars",
    "load_table_changes_as_arrow",
    "load_table_changes_as_pandas",
    "load_table_changes_as_polars",
    "read_remote_file",
]
