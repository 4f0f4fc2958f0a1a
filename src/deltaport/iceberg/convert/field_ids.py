"""Iceberg field ids for a Delta table's columns, a function of the Delta log alone.

Iceberg readers match columns by id, so an id must mean the same column at every version a
recipient can read, on every replica and across restarts. A column-mapping table has them
already (``delta.columnMapping.id`` and, for list elements and map keys and values,
``delta.columnMapping.nested.ids``). Every other field gets its id from the log's schema
history (:func:`deltaport.iceberg.convert.schema.derive_field_ids`): the schemas of the
earliest version the log can reconstruct and of each later metaData action, walked in
version order, each field path not seen before taking the next id; an id is never given to
another path.
"""

from __future__ import annotations

import threading

ASSIGNED_FROM_WITH_MAPPING = 1_000_000
"""Where assigned ids start in a column-mapping table: far above the table's own ids, so
that the two never meet."""


class FieldIds:
    """The ids of one table, by the field's path of physical names (``a``, ``a.element``,
    ``m.key``, ``s.x``), assigned in the order the schema history first names them.

    ``base`` is the earliest version of the history walked, ``walked`` the last one, and
    ``first`` the first id assigned."""

    def __init__(self, first: int, base: int) -> None:
        self.first = first
        self.base = base
        self.walked = base
        self._lock = threading.Lock()
        self._ids: dict[str, int] = {}
        self._next = first

    def id_for(self, path: str, known: int | None = None) -> int:
        """The id of the field at ``path``: ``known`` (the table's own) when given."""
        if known is not None:
            return known
        with self._lock:
            found = self._ids.get(path)
            if found is None:
                found = self._ids[path] = self._next
                self._next += 1
            return found

    def extends(self, other: FieldIds) -> bool:
        """Whether every id ``other`` assigned means the same path here."""
        if other is self:
            return True
        with self._lock, other._lock:
            mine = self._ids
            return self.first == other.first and all(
                mine.get(p) == i for p, i in other._ids.items()
            )
