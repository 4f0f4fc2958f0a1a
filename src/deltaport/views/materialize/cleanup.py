"""Files a crash left behind: data files under a materialized table that no committed
version adds. Run when no materialization of that table is under way (at start-up)."""

from __future__ import annotations

import pyarrow.compute as pc

from deltaport.delta import DeltaTable, TableNotFoundError
from deltaport.storage import Storage


def _referenced(table: DeltaTable) -> set[str]:
    try:
        latest = table.latest_version()
    except TableNotFoundError:
        return set()
    files = table.changes(0, latest).files
    adds = files.filter(pc.equal(files.column("action"), "add"))
    return {str(path) for path in adds.column("path").to_pylist()}


def remove_unreferenced(location: str) -> list[str]:
    """Remove the data files no version of the table at ``location`` adds; their names."""
    storage = Storage(location)
    referenced = _referenced(DeltaTable(location))
    stray = [
        entry.name
        for entry in storage.list_dir("")
        if entry.name.endswith(".parquet") and entry.name not in referenced
    ]
    storage.delete([storage.resolve(name) for name in stray])
    return sorted(stray)
