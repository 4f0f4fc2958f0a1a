"""Column changes between two Delta schemas (``schemaString`` JSON).

Columns are matched by column-mapping id when every field of both schemas has one, else
by physical name (falling back to the logical name, which is also what a table gets as
physical name when column mapping is enabled later). Matching by id or physical name is
what makes renames visible; nested struct fields are compared by dotted path.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import msgspec

from deltaport.diff.base.model import ColumnChange

_ID_KEY = "delta.columnMapping.id"
_PHYSICAL_KEY = "delta.columnMapping.physicalName"


@dataclass(frozen=True)
class _Column:
    path: str
    leaf_name: str
    type_name: str
    parent_key: tuple[str, ...]


def schema_changes(before: str | None, after: str | None) -> tuple[ColumnChange, ...]:
    """Changes from schema ``before`` to ``after`` (None for "no table")."""
    before_fields = _fields(before)
    after_fields = _fields(after)
    by_id = _all_have_ids(before_fields) and _all_have_ids(after_fields)
    old = dict(_flatten(before_fields, by_id, (), ""))
    new = dict(_flatten(after_fields, by_id, (), ""))
    changes: list[ColumnChange] = []
    for key, column in new.items():
        previous = old.get(key)
        if previous is None:
            if column.parent_key not in new or column.parent_key in old:
                changes.append(ColumnChange("added", column.path, after=column.type_name))
            continue
        if previous.leaf_name != column.leaf_name:
            changes.append(
                ColumnChange("renamed", column.path, before=previous.path, after=column.path)
            )
        if previous.type_name != column.type_name and not (
            previous.type_name.startswith("struct<") and column.type_name.startswith("struct<")
        ):
            changes.append(
                ColumnChange(
                    "type_changed", column.path, before=previous.type_name, after=column.type_name
                )
            )
    for key, column in old.items():
        if key not in new and (column.parent_key not in old or column.parent_key in new):
            changes.append(ColumnChange("dropped", column.path, before=column.type_name))
    return tuple(changes)


def _fields(schema_string: str | None) -> list[Mapping[str, Any]]:
    """Top-level fields; none for a missing or unparsable schema (some test logs have one)."""
    if not schema_string:
        return []
    try:
        schema = msgspec.json.decode(schema_string)
    except msgspec.DecodeError:
        return []
    return list(schema.get("fields") or []) if isinstance(schema, dict) else []


def _all_have_ids(fields: list[Mapping[str, Any]]) -> bool:
    def walk(items: list[Mapping[str, Any]]) -> Iterator[bool]:
        for f in items:
            yield _ID_KEY in (f.get("metadata") or {})
            t = f.get("type")
            if isinstance(t, dict) and t.get("type") == "struct":
                yield from walk(list(t.get("fields") or []))

    return all(walk(fields))


def _flatten(
    fields: list[Mapping[str, Any]], by_id: bool, parent: tuple[str, ...], prefix: str
) -> Iterator[tuple[tuple[str, ...], _Column]]:
    for f in fields:
        meta = f.get("metadata") or {}
        name = str(f.get("name"))
        ident = str(meta[_ID_KEY]) if by_id else str(meta.get(_PHYSICAL_KEY, name))
        key = (*parent, ident)
        path = f"{prefix}{name}"
        t = f.get("type")
        yield key, _Column(path, name, type_name(t), parent)
        if isinstance(t, dict) and t.get("type") == "struct":
            yield from _flatten(list(t.get("fields") or []), by_id, key, f"{path}.")


def type_name(t: Any) -> str:
    """A Delta type as compact text: ``long``, ``array<string>``, ``struct<a:int>``."""
    if isinstance(t, str):
        return t
    if not isinstance(t, dict):
        return str(t)
    kind = t.get("type")
    if kind == "array":
        return f"array<{type_name(t.get('elementType'))}>"
    if kind == "map":
        return f"map<{type_name(t.get('keyType'))},{type_name(t.get('valueType'))}>"
    if kind == "struct":
        inner = ",".join(f"{f.get('name')}:{type_name(f.get('type'))}" for f in t["fields"])
        return f"struct<{inner}>"
    return str(kind)
