"""The Iceberg files no served version needs, removed away from the requests: a sweep over
every table location the metadata directory holds metadata of, asking the catalog source
which tables at it are offered to Iceberg readers now (with their start versions and whether
their history is shared), on a thread of its own or once from ``deltaport iceberg cleanup``.

A location no offered table is at any more (removed from every share, or no longer offered)
keeps nothing but the server's bookkeeping: its files go once older than the grace. A
location whose latest version cannot be loaded is left as it is."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from deltaport.catalog.model import Recipient, SharedTable
from deltaport.delta.errors import DeltaError
from deltaport.iceberg.convert.tables import IcebergTables
from deltaport.iceberg.errors import UnsupportedTable
from deltaport.iceberg.rest.routes import offered
from deltaport.read.deletion_vectors import DeletionVectorError
from deltaport.server.sources.catalog_source import CatalogSource
from deltaport.storage import StorageError
from deltaport.storage.uri import parse_location
from deltaport.text.wording import count

log = logging.getLogger(__name__)

_EVERYTHING = Recipient("provider")
"""Who the sweep asks as: a recipient without a share list sees every share."""


@dataclass(frozen=True)
class SweptTable:
    """One table location swept: the files removed (or that would be, in a dry run), as
    readers name them."""

    location: str
    removed: list[str]


class IcebergSweeper:
    """Sweeps of ``tables``' metadata over the tables ``source`` offers; files modified in
    the last ``retain_seconds`` stay. ``options_for``: the storage options of a location no
    table is at any more (from the ``storage`` entries)."""

    def __init__(
        self,
        source: CatalogSource,
        tables: IcebergTables,
        retain_seconds: float,
        options_for: Callable[[str], dict[str, str]],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._source = source
        self._tables = tables
        self._retain = retain_seconds
        self._options_for = options_for
        self._clock = clock

    def sweep(self, *, dry_run: bool = False) -> list[SweptTable]:
        """Sweep every location once; the ones that could not be swept are logged."""
        cutoff_ms = int((self._clock() - self._retain) * 1000)
        offered_at: dict[str, list[SharedTable]] = {}
        for share in self._source.view().shares(_EVERYTHING):
            for schema in share.schemas.values():
                for table in schema.tables.values():
                    if offered(table):
                        offered_at.setdefault(table.location.uri, []).append(table)
        swept: list[SweptTable] = []
        for uri in self._tables.locations():
            here = offered_at.get(uri, [])
            try:
                location = parse_location(uri)
                options = here[0].storage_options if here else self._options_for(uri)
                removed = self._tables.cleanup(location, options, here, cutoff_ms, dry_run=dry_run)
            except (
                DeltaError,
                StorageError,
                DeletionVectorError,
                UnsupportedTable,
                OSError,
                ValueError,  # a location not parsed, a metadata file or manifest list not read
                KeyError,
            ) as exc:
                log.warning("cleaning up the Iceberg files of %s failed: %s", uri, exc)
                continue
            if removed and not dry_run:
                log.info("removed %s of %s", count(len(removed), "Iceberg file"), uri)
            swept.append(SweptTable(uri, removed))
        return swept

    def start(self, every_seconds: float) -> None:
        """Sweep every ``every_seconds`` on a daemon thread (it ends with the process), the
        first sweep one interval after the start (not while the server warms up)."""
        threading.Thread(
            target=self._sweeping,
            args=(every_seconds,),
            name="deltaport-iceberg-cleanup",
            daemon=True,
        ).start()

    def _sweeping(self, every_seconds: float) -> None:
        while True:
            time.sleep(every_seconds)
            try:
                self.sweep()
            except Exception:  # a failed sweep is retried at the next interval
                log.exception("the Iceberg cleanup failed")
