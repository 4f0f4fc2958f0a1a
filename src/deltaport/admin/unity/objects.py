"""A share's ``data_object`` as a deltaport shared table, and back.

deltaport shares a table by its storage location, not by a name in a metastore, so:

- ``name`` is the table's location (an absolute path or a URI, as ``deltaport table add``
  takes it);
- ``shared_as`` (``schema.table``, letters, digits and underscores) is the name recipients
  see in the share; it is required to add a table, and names the table to remove or update
  (``name`` alone does too, when one table of the share has that location);
- ``history_data_sharing_status`` ``ENABLED`` shares history (time travel, change data);
- ``start_version``, ``comment`` are kept as given;
- a ``SCHEMA`` object (``name``: the schema as recipients see it) is only updated: its
  ``comment`` is the schema's (a schema exists through its tables, which are added as
  ``TABLE`` objects); answers show it for a schema that has a comment;
- ``partitions`` become the table's partition filter: the values of one partition are
  joined with AND, the partitions with OR; ``EQUAL`` with ``value`` compares with a string
  (no value: IS NULL), with ``recipient_property_key`` with the recipient's property
  (``CURRENT_RECIPIENT('key')``). Answers show the filter as ``partition_filter`` and, when
  it has this form (a filter set with deltaport's commands may not), as ``partitions``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from deltaport.admin.unity.bodies import DataObject, ObjectUpdate, Partition, refuse_set
from deltaport.catalog.partition_filter import Condition, as_partitions
from deltaport.catalog.rows import TableRow
from deltaport.protocol.errors import InvalidParameterError, ResourceNotFoundError
from deltaport.protocol.names import name_key

_SHARED_AS = re.compile(r"^[A-Za-z0-9_]+\.[A-Za-z0-9_]+$")
_HISTORY = {"ENABLED": True, "DISABLED": False}
_UNSUPPORTED = ("cdf_enabled", "content", "string_shared_as", "added_at", "added_by", "status")


@dataclass(frozen=True)
class TableSettings:
    """What a ``data_object`` sets; None: not given (a new table takes the default, an
    updated one keeps what it had)."""

    history_shared: bool | None
    start_version: int | None
    partition_filter: str | None
    partitions_given: bool
    comment: str | None


def settings(obj: DataObject, where: str) -> TableSettings:
    refuse_set(obj, where, _UNSUPPORTED, "not supported by deltaport")
    if obj.data_object_type != "TABLE":
        raise InvalidParameterError(
            f"{where}data_object_type: only TABLE can be shared, got {obj.data_object_type!r}"
        )
    history = None
    if obj.history_data_sharing_status is not None:
        if obj.history_data_sharing_status not in _HISTORY:
            raise InvalidParameterError(
                f"{where}history_data_sharing_status: ENABLED or DISABLED, "
                f"got {obj.history_data_sharing_status!r}"
            )
        history = _HISTORY[obj.history_data_sharing_status]
    if obj.start_version is not None and obj.start_version < 0:
        raise InvalidParameterError(f"{where}start_version: must be 0 or more")
    partition_filter = None
    if obj.partitions:
        partition_filter = _filter(obj.partitions, f"{where}partitions")
    return TableSettings(
        history,
        obj.start_version,
        partition_filter,
        obj.partitions is not None,
        obj.comment,
    )


def schema_comment(update: ObjectUpdate, where: str) -> tuple[str, str | None] | None:
    """``(schema, comment)`` of an update of a ``SCHEMA`` object; None for another object."""
    obj = update.data_object
    if obj.data_object_type != "SCHEMA":
        return None
    if update.action != "UPDATE":
        raise InvalidParameterError(
            f"{where}action: a SCHEMA object is only updated (its comment); a schema exists "
            "through its tables: add them as TABLE objects"
        )
    where += "data_object."
    refuse_set(obj, where, _UNSUPPORTED, "not supported by deltaport")
    for field in ("shared_as", "history_data_sharing_status", "start_version", "partitions"):
        if getattr(obj, field) is not None:
            raise InvalidParameterError(f"{where}{field}: a SCHEMA object has only a comment")
    return obj.name, obj.comment


def schema_json(name: str, comment: str) -> dict[str, Any]:
    return {"name": name, "data_object_type": "SCHEMA", "comment": comment, "status": "ACTIVE"}


def shared_as(obj: DataObject, where: str) -> tuple[str, str] | None:
    """``(schema, table)`` of ``shared_as``, or None when absent."""
    if obj.shared_as is None:
        return None
    if not _SHARED_AS.match(obj.shared_as):
        raise InvalidParameterError(
            f"{where}shared_as: must be schema.table in letters, digits and underscores, "
            f"got {obj.shared_as[:200]!r}"
        )
    schema, table = obj.shared_as.split(".")
    return schema, table


def find(tables: list[TableRow], obj: DataObject, where: str) -> TableRow:
    """The table of the share that ``obj`` names: by ``shared_as``, else by location."""
    alias = shared_as(obj, where)
    if alias is not None:
        key = name_key(".".join(alias))
        found = [t for t in tables if name_key(f"{t.schema}.{t.name}") == key]
        if not found:
            raise ResourceNotFoundError(f"{where}shared_as: the share has no table {obj.shared_as}")
        return found[0]
    found = [t for t in tables if t.location == obj.name]
    if not found:
        raise ResourceNotFoundError(f"{where}name: the share has no table at {obj.name[:300]!r}")
    if len(found) > 1:
        raise InvalidParameterError(
            f"{where}name: the share has {len(found)} tables at this location; give shared_as"
        )
    return found[0]


def object_json(t: TableRow) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": t.location,
        "data_object_type": "TABLE",
        "shared_as": f"{t.schema}.{t.name}",
        "history_data_sharing_status": "ENABLED" if t.history_shared else "DISABLED",
        "start_version": t.start_version,
        "status": "ACTIVE",
    }
    if t.comment is not None:
        out["comment"] = t.comment
    if t.partition_filter is not None:
        out["partition_filter"] = t.partition_filter
        partitions = as_partitions(t.partition_filter)
        if partitions is not None:
            out["partitions"] = [{"values": [_value(c) for c in p]} for p in partitions]
    return out


def _value(condition: Condition) -> dict[str, str]:
    column, kind, value = condition
    out = {"name": column, "op": "EQUAL"}
    if kind == "property" and value is not None:
        out["recipient_property_key"] = value
    elif kind == "value" and value is not None:
        out["value"] = value
    return out


def _filter(partitions: list[Partition], where: str) -> str:
    ors = []
    for i, partition in enumerate(partitions):
        if not partition.values:
            raise InvalidParameterError(f"{where}[{i}].values: give at least one value")
        ands = [_condition(v, f"{where}[{i}].values[{j}]") for j, v in enumerate(partition.values)]
        ors.append("(" + " AND ".join(ands) + ")")
    return " OR ".join(ors)


def _condition(value: Any, where: str) -> str:
    if value.op != "EQUAL":
        raise InvalidParameterError(f"{where}.op: only EQUAL is supported, got {value.op!r}")
    if not value.name:
        raise InvalidParameterError(f"{where}.name: the partition column is required")
    column = "`" + value.name.replace("`", "``") + "`"
    if value.recipient_property_key is not None:
        if value.value is not None:
            raise InvalidParameterError(f"{where}: give value or recipient_property_key, not both")
        return f"{column} = CURRENT_RECIPIENT({_quoted(value.recipient_property_key)})"
    if value.value is None:
        return f"{column} IS NULL"
    return f"{column} = {_quoted(value.value)}"


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
