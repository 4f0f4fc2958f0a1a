"""A process-wide cache of open tables, so snapshots are shared across requests, and the
process's one memory budget (`TABLE_BUDGET`) for what it keeps of tables between
requests: the open tables with their snapshots, and whatever a server keeps built from
them (prepared answer pieces, encoded answers). Each holder puts its entries in with an
estimated size in bytes and a way to drop them; once the total passes the limit, the
least recently used entries are dropped, whichever cache holds them (a table forgotten is
read again on its next open)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping

from deltaport.delta.table import DeltaTable
from deltaport.storage import Location, parse_location

Evict = Callable[[], None]


class MemoryBudget:
    """Entries by key, least recently used first; ``limit`` in bytes (None: no limit)."""

    def __init__(self, limit: int | None = None) -> None:
        self.limit = limit
        self.evictions = 0
        self._entries: OrderedDict[Hashable, tuple[int, Evict]] = OrderedDict()
        self._held = 0
        self._lock = threading.Lock()

    @property
    def held_bytes(self) -> int:
        return self._held

    def hold(self, key: Hashable, size: int, evict: Evict) -> None:
        """Put in (or resize) ``key``, as the most recently used; drop others while over
        the limit (never ``key`` itself: what was just used stays). ``evict`` is called
        without the budget's lock held, so it may take its cache's own. Without a limit
        nothing is tracked (a library user's process keeps what it opens)."""
        if self.limit is None:
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._held -= old[0]
            self._entries[key] = (size, evict)
            self._held += size
            dropped = self._over_limit(key)
        for drop in dropped:
            drop()

    def touch(self, key: Hashable) -> None:
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)

    def release(self, key: Hashable) -> None:
        """Take ``key`` out (its holder dropped it)."""
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._held -= old[0]

    def _over_limit(self, keep: Hashable) -> list[Evict]:
        dropped: list[Evict] = []
        if self.limit is None:
            return dropped
        while self._held > self.limit and len(self._entries) > 1:
            key, (size, evict) = next(iter(self._entries.items()))
            if key == keep:
                self._entries.move_to_end(key)
                continue
            del self._entries[key]
            self._held -= size
            self.evictions += 1
            dropped.append(evict)
        return dropped


TABLE_BUDGET = MemoryBudget()
"""The process's one budget (no limit until a server sets one: see ``snapshotCacheBytes``)."""


_Key = tuple[str, tuple[tuple[str, str], ...]]
_TABLES: dict[_Key, DeltaTable] = {}
_LOCK = threading.Lock()
_Resize = Callable[[DeltaTable], None]


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
            TABLE_BUDGET.touch(("table", given.location.uri, options))
            return given
    loc = parse_location(location) if isinstance(location, str) else location
    key = (loc.uri, options)
    with _LOCK:
        table = _TABLES.get(key)
        if table is None:
            table = DeltaTable(loc, storage_options)
            table.on_resize = _measure(key)
            _TABLES[key] = table
        if isinstance(location, str):
            _TABLES[(location, options)] = table
    TABLE_BUDGET.touch(("table", *key))
    return table


def _measure(key: _Key) -> _Resize:
    budget_key = ("table", *key)

    def resized(table: DeltaTable) -> None:
        def forget() -> None:
            with _LOCK:
                for name in [name for name, held in _TABLES.items() if held is table]:
                    del _TABLES[name]

        TABLE_BUDGET.hold(budget_key, table.held_bytes(), forget)

    return resized


def clear_table_cache() -> None:
    """Forget every open table (their cached snapshots go with them)."""
    with _LOCK:
        for key in {(t.location.uri, k[1]) for k, t in _TABLES.items()}:
            TABLE_BUDGET.release(("table", *key))
        _TABLES.clear()
