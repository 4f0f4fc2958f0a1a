"""A process-wide cache of open tables, so snapshots are shared across requests."""

from __future__ import annotations

import threading
from collections.abc import Mapping

from deltaport.delta.table import DeltaTable
from deltaport.storage import Location, parse_location

_TABLES: dict[tuple[str, tuple[tuple[str, str], ...]], DeltaTable] = {}
_LOCK = threading.Lock()


def open_table(
    location: str | Location, storage_options: Mapping[str, str] | None = None
) -> DeltaTable:
    """The shared [`DeltaTable`][deltaport.delta.DeltaTable] for ``location`` and
    ``storage_options``."""
    options = tuple(sorted((storage_options or {}).items()))
    if isinstance(location, str):
        # also keyed by the location as given: parsing it costs more than the lookup
        given = _TABLES.get((location, options))
        if given is not None:
            return given
    loc = parse_location(location) if isinstance(location, str) else location
    key = (loc.uri, options)
    with _LOCK:
        table = _TABLES.get(key)
        if table is None:
            table = DeltaTable(loc, storage_options)
            _TABLES[key] = table
        if isinstance(location, str):
            _TABLES[(location, options)] = table
        return table


def clear_table_cache() -> None:
    """Forget every open table (their cached snapshots go with them)."""
    with _LOCK:
        _TABLES.clear()
