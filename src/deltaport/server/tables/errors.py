"""Engine and storage failures of a shared table as protocol errors.

The recipient learns the table's name and, for a corrupt log, the version at fault; the
storage location and the engine's own message (which names files) go to the server log.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from deltaport.catalog.model import SharedTable
from deltaport.delta.errors import DeltaError, LogCorruptError, TableNotFoundError
from deltaport.protocol.errors import (
    InsufficientStorageError,
    InternalError,
    InvalidParameterError,
    ResourceNotFoundError,
    SharingError,
    TableCorruptError,
    UnsupportedOperationError,
)
from deltaport.sharing import RefusalKind, TableRefusal
from deltaport.storage import StorageError, StorageFullError

log = logging.getLogger(__name__)


def sharing_error(refusal: TableRefusal) -> SharingError:
    """The resolver's refusal in the Delta Sharing API's shape."""
    if refusal.kind is RefusalKind.NOT_FOUND:
        return ResourceNotFoundError(refusal.message)
    if refusal.kind is RefusalKind.UNSUPPORTED_TABLE:
        return UnsupportedOperationError(refusal.message)
    return InvalidParameterError(refusal.message)


@contextmanager
def refusals_answered() -> Iterator[None]:
    """The resolver's refusals raised as the sharing API's errors."""
    try:
        yield
    except TableRefusal as refusal:
        raise sharing_error(refusal) from None


def table_name(table: SharedTable) -> str:
    return f"{table.share}.{table.schema}.{table.name}"


def table_failure(table: SharedTable, exc: DeltaError | StorageError) -> SharingError:
    """The error answering a read of ``table`` that failed for a reason of the provider's
    (the request's own faults are mapped by the caller first)."""
    name = table_name(table)
    if isinstance(exc, TableNotFoundError):
        log.error("no Delta table at the location of %s", name)
        return ResourceNotFoundError(f"the data of table {name} was not found")
    log.error("reading table %s failed: %s", name, exc)
    if isinstance(exc, LogCorruptError):
        return corrupt_table(name, exc.version)
    if isinstance(exc, StorageFullError):
        return InsufficientStorageError(
            f"the server's disk is full: table {name} cannot be prepared for reading; retry "
            "once the provider has freed space"
        )
    return InternalError()


def file_outside_table(table: SharedTable, version: int, why: Exception) -> TableCorruptError:
    """A file of the log at ``version`` lies outside the table: it is never served."""
    name = table_name(table)
    log.error("table %s at version %d lists a file outside the table: %s", name, version, why)
    return TableCorruptError(
        f"table {name} cannot be read at version {version}: its Delta log lists a file "
        "outside the table, which is never served; the provider has to repair the log"
    )


def corrupt_table(name: str, version: int | None) -> TableCorruptError:
    at = "" if version is None else f" at version {version}"
    return TableCorruptError(
        f"table {name} cannot be read{at}: its Delta log is corrupt and the provider has to "
        "repair it"
    )
