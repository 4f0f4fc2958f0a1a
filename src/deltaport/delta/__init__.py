"""The Delta Lake log engine: snapshots, time travel, version ranges, change data, history."""

from deltaport.delta.cache import clear_table_cache, open_table
from deltaport.delta.changes import TableChanges, VersionEntry
from deltaport.delta.errors import (
    CdfNotEnabledError,
    DeltaError,
    LogCorruptError,
    TableNotFoundError,
    TimestampOutOfRangeError,
    UnsupportedFeatureError,
    VersionNotFoundError,
)
from deltaport.delta.model import (
    CHANGE_SCHEMA,
    FILE_SCHEMA,
    DeletionVector,
    Metadata,
    Protocol,
)
from deltaport.delta.snapshot import Snapshot
from deltaport.delta.table import CommitEntry, DeltaTable

__all__ = [
    "CHANGE_SCHEMA",
    "FILE_SCHEMA",
    "CdfNotEnabledError",
    "CommitEntry",
    "DeletionVector",
    "DeltaError",
    "DeltaTable",
    "LogCorruptError",
    "Metadata",
    "Protocol",
    "Snapshot",
    "TableChanges",
    "TableNotFoundError",
    "TimestampOutOfRangeError",
    "UnsupportedFeatureError",
    "VersionEntry",
    "VersionNotFoundError",
    "clear_table_cache",
    "open_table",
]
