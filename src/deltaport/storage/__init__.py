"""Where bytes live: local disk and cloud object stores (via obstore), and URL signing."""

from deltaport.storage.store import (
    FULL_ERRNOS,
    ObjectExistsError,
    ObjectInfo,
    ObjectNotFoundError,
    Storage,
    StorageError,
    StorageFullError,
)
from deltaport.storage.uri import InvalidLocationError, Location, parse_location, resolve_log_path

__all__ = [
    "FULL_ERRNOS",
    "InvalidLocationError",
    "Location",
    "ObjectExistsError",
    "ObjectInfo",
    "ObjectNotFoundError",
    "Storage",
    "StorageError",
    "StorageFullError",
    "parse_location",
    "resolve_log_path",
]
