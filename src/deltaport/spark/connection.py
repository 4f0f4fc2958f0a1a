"""Opening the shared table the options name (on the driver, or on an executor that must
refresh expired URLs)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from deltaport.client import SharingClient, TableHandle
from deltaport.client.access import check_mode
from deltaport.spark.options import SharingOptions


@contextmanager
def open_table(options: SharingOptions) -> Iterator[TableHandle]:
    """A handle on the table (reading in the options' ``accessMode``), with its HTTP
    connections closed afterwards."""
    client = SharingClient(
        options.profile,
        concurrency=4,
        access_mode=check_mode(options.access_mode),
        storage_options=options.storage_options,
    )
    try:
        yield client.table(options.table)
    finally:
        client.close()
