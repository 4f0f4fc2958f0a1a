"""Where bytes live: local disk and cloud object stores (via obstore), and URL signing."""

from deltaport.storage.store import ObjectInfo, ObjectNotFoundError, Storage, StorageError
from deltaport.storage.uri import InvalidLocationError, Location, parse_location, resolve_log_path

__all__ = [
    "InvalidLocationError",
    "Location",
    "ObjectInfo",
    "ObjectNotFoundError",
    "Storage",
    "StorageError",
    "parse_location",
    "resolve_log_path",
]
