"""What the admin listener answers when the engine or the differ refuses: an error with a
status and an errorCode, as the sharing API answers, never a stack trace."""

from __future__ import annotations

from deltaport.catalog.rows import catalog_refusal
from deltaport.delta.errors import DeltaError, TableNotFoundError, VersionNotFoundError
from deltaport.diff.base.errors import DiffError, TablesNotFoundError, UnknownTableFormatError
from deltaport.protocol.errors import (
    InvalidParameterError,
    ResourceNotFoundError,
    SharingError,
)
from deltaport.protocol.predicates import PredicateError
from deltaport.server.tables.errors import sharing_error
from deltaport.sharing import TableRefusal
from deltaport.storage import StorageError


def as_sharing_error(exc: Exception) -> SharingError | None:
    """The answer for ``exc``, or None for an unexpected error (a 500 with a fixed text).
    The catalog's refusals are answered as :func:`catalog_refusal` says.

    Storage errors (any :class:`OSError`) name the location and the cause as the storage
    layer words them (the error kind and the location, never the store's own text, which
    may echo credentials or signed URLs); the engine's and the differ's messages are meant
    for users."""
    if isinstance(exc, SharingError):
        return exc
    if isinstance(exc, TableRefusal):  # the resolver's: as the sharing API answers it
        return sharing_error(exc)
    refused = catalog_refusal(exc)
    if refused is not None:
        return refused
    missing = TablesNotFoundError | UnknownTableFormatError | TableNotFoundError
    if isinstance(exc, missing | VersionNotFoundError):
        return ResourceNotFoundError(str(exc))
    if isinstance(exc, OSError):  # StorageError, or the OS refusing a local path
        return InvalidParameterError(f"the table's storage could not be read: {_cause(exc)}")
    if isinstance(exc, DiffError | DeltaError | PredicateError | ValueError):
        return InvalidParameterError(str(exc))
    return None


def _cause(exc: OSError) -> str:
    if isinstance(exc, StorageError):
        return str(exc)  # worded by storage/store.py: what failed on which location
    # the OS refusing a local path: its reason and the path
    reason = exc.strerror or type(exc).__name__
    return f"{reason}: {exc.filename}" if exc.filename else reason
