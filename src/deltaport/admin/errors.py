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


def as_sharing_error(exc: Exception) -> SharingError | None:
    """The answer for ``exc``, or None for an unexpected error (a 500 with a fixed text).
    The catalog's refusals are answered as :func:`catalog_refusal` says.

    Storage errors (any :class:`OSError`) are reported without their text, which may name
    credentials or endpoints; the engine's and the differ's messages are meant for users."""
    if isinstance(exc, SharingError):
        return exc
    refused = catalog_refusal(exc)
    if refused is not None:
        return refused
    missing = TablesNotFoundError | UnknownTableFormatError | TableNotFoundError
    if isinstance(exc, missing | VersionNotFoundError):
        return ResourceNotFoundError(str(exc))
    if isinstance(exc, OSError):  # StorageError, or the OS refusing a local path
        return InvalidParameterError("the table's storage could not be read")
    if isinstance(exc, DiffError | DeltaError | PredicateError | ValueError):
        return InvalidParameterError(str(exc))
    return None
