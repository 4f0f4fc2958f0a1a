"""Stable Iceberg field ids for a Delta table's columns.

Iceberg readers match columns by id, so an id must mean the same column at every version a
recipient can read. A column-mapping table has them already (``delta.columnMapping.id`` and,
for list elements and map keys and values, ``delta.columnMapping.nested.ids``). Every other
field gets an id the first time it is seen, kept in a small JSON file beside the table's
Iceberg metadata, so that a column added later never takes an id an earlier column had.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from deltaport.storage import FULL_ERRNOS, StorageError, StorageFullError

ASSIGNED_FROM_WITH_MAPPING = 1_000_000
"""Where ids this server assigns start in a column-mapping table: far above the table's own
ids, so that the two never meet."""


class FieldIds:
    """The ids of one table, by the field's path of physical names (``a``, ``a.element``,
    ``m.key``, ``s.x``), assigned on first sight and persisted in ``path``."""

    def __init__(self, path: Path, first: int = 1) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._ids: dict[str, int] = {}
        self._next = first
        self._dirty = False
        if path.exists():
            saved = json.loads(path.read_text())
            self._ids = {str(k): int(v) for k, v in saved["ids"].items()}
            self._next = max(int(saved["next"]), first)

    def id_for(self, path: str, known: int | None = None) -> int:
        """The id of the field at ``path``: ``known`` (the table's own) when given."""
        if known is not None:
            return known
        with self._lock:
            found = self._ids.get(path)
            if found is None:
                found = self._ids[path] = self._next
                self._next += 1
                self._dirty = True
            return found

    def save(self) -> None:
        """Write newly assigned ids (atomically: a reader never sees half a file)."""
        with self._lock:
            if not self._dirty:
                return
            self._path.parent.mkdir(parents=True, exist_ok=True)
            partial = self._path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
            try:
                partial.write_text(
                    json.dumps({"next": self._next, "ids": self._ids}, sort_keys=True)
                )
                os.replace(partial, self._path)
            except OSError as exc:
                partial.unlink(missing_ok=True)
                error = StorageFullError if exc.errno in FULL_ERRNOS else StorageError
                raise error(f"cannot write {self._path}: {exc.strerror}") from exc
            self._dirty = False
