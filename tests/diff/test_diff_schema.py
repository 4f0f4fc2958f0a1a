from __future__ import annotations

import json
from typing import Any

from deltaport.diff.base.model import ColumnChange
from deltaport.diff.history.schema import schema_changes, type_name


def _field(name: str, type_: Any, field_id: int | None = None, physical: str | None = None) -> Any:
    meta: dict[str, Any] = {}
    if field_id is not None:
        meta["delta.columnMapping.id"] = field_id
    if physical is not None:
        meta["delta.columnMapping.physicalName"] = physical
    return {"name": name, "type": type_, "nullable": True, "metadata": meta}


def _schema(*fields: Any) -> str:
    return json.dumps({"type": "struct", "fields": list(fields)})


def _struct(*fields: Any) -> dict[str, Any]:
    return {"type": "struct", "fields": list(fields)}


def test_added_dropped_and_type_changed_by_name() -> None:
    before = _schema(_field("a", "integer"), _field("b", "string"))
    after = _schema(_field("a", "long"), _field("c", "double"))
    assert set(schema_changes(before, after)) == {
        ColumnChange("type_changed", "a", "integer", "long"),
        ColumnChange("added", "c", after="double"),
        ColumnChange("dropped", "b", before="string"),
    }


def test_no_schema_before_means_every_column_added() -> None:
    after = _schema(_field("a", "integer"), _field("s", _struct(_field("x", "long"))))
    assert schema_changes(None, after) == (
        ColumnChange("added", "a", after="integer"),
        ColumnChange("added", "s", after="struct<x:long>"),
    )


def test_same_schema_has_no_changes() -> None:
    schema = _schema(_field("a", "integer", 1, "col-1"))
    assert schema_changes(schema, schema) == ()


def test_rename_under_column_mapping_by_id() -> None:
    before = _schema(_field("id", "long", 1, "col-aaa"), _field("v", "string", 2, "col-bbb"))
    after = _schema(_field("new_id", "long", 1, "col-aaa"), _field("v", "string", 2, "col-bbb"))
    assert schema_changes(before, after) == (ColumnChange("renamed", "new_id", "id", "new_id"),)


def test_drop_and_re_add_same_name_under_column_mapping_is_not_a_rename() -> None:
    before = _schema(_field("v", "string", 1, "col-a"))
    after = _schema(_field("v", "string", 2, "col-b"))
    assert set(schema_changes(before, after)) == {
        ColumnChange("added", "v", after="string"),
        ColumnChange("dropped", "v", before="string"),
    }


def test_mapping_enabled_later_matches_by_physical_name() -> None:
    before = _schema(_field("id", "long"))
    after = _schema(_field("newid", "long", 1, "id"), _field("x", "long", 2, "col-x"))
    assert set(schema_changes(before, after)) == {
        ColumnChange("renamed", "newid", "id", "newid"),
        ColumnChange("added", "x", after="long"),
    }


def test_nested_fields_by_dotted_path_and_only_topmost_add() -> None:
    before = _schema(_field("s", _struct(_field("x", "long"), _field("y", "string"))))
    after = _schema(
        _field("s", _struct(_field("x", "double"), _field("z", "string"))),
        _field("t", _struct(_field("inner", "long"))),
    )
    assert set(schema_changes(before, after)) == {
        ColumnChange("type_changed", "s.x", "long", "double"),
        ColumnChange("added", "s.z", after="string"),
        ColumnChange("dropped", "s.y", before="string"),
        ColumnChange("added", "t", after="struct<inner:long>"),
    }


def test_renamed_struct_reports_only_the_struct() -> None:
    before = _schema(_field("s", _struct(_field("x", "long", 2, "p2")), 1, "p1"))
    after = _schema(_field("r", _struct(_field("x", "long", 2, "p2")), 1, "p1"))
    assert schema_changes(before, after) == (ColumnChange("renamed", "r", "s", "r"),)


def test_type_names() -> None:
    assert type_name({"type": "array", "elementType": "long", "containsNull": True}) == (
        "array<long>"
    )
    assert type_name(
        {"type": "map", "keyType": "string", "valueType": "integer", "valueContainsNull": True}
    ) == ("map<string,integer>")
    assert type_name("decimal(10,2)") == "decimal(10,2)"


def test_unparsable_schemas_have_no_columns() -> None:
    assert schema_changes("None", "None") == ()
    assert schema_changes("[1]", _schema(_field("a", "long"))) == (
        ColumnChange("added", "a", after="long"),
    )
