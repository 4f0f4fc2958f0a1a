"""Opening the shared table the options name (on the driver, or on an executor that must
refresh expired URLs)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from deltaport.client import SharingClient, TableHandle
from deltaport.client.access import check_mode
from deltaport.spark.base.options import SharingOptions


def connect(options: SharingOptions) -> SharingClient:
    """A client reading in the options' ``accessMode`` (else the profile's); the caller
    closes it."""
    return SharingClient(
        options.profile,
        concurrency=4,
        access_mode=check_mode(options.access_mode) if options.access_mode else None,
        storage_options=options.storage_options,
    )


@contextmanager
def open_table(options: SharingOptions) -> Iterator[TableHandle]:
    """A handle on the table, with its HTTP connections closed afterwards."""
    client = connect(options)
    try:
        yield client.table(options.table)
    finally:
        client.close()
