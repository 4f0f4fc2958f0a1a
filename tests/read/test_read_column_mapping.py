"""Column mapping: files written with physical names / field ids read as logical columns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from deltaport.delta.model import Metadata
from deltaport.protocol.schema import parse_schema, to_arrow_schema
from deltaport.read import read_data_file


def _field(name: str, type_: Any, physical: str, field_id: int) -> dict[str, Any]:
    return {
        "name": name,
        "type": type_,
        "nullable": True,
        "metadata": {
            "delta.columnMapping.id": field_id,
            "delta.columnMapping.physicalName": physical,
        },
    }


INNER = {
    "type": "struct",
    "fields": [_field("x", "integer", "col-x", 4), _field("y", "string", "col-y", 5)],
}
SCHEMA = {
    "type": "struct",
    "fields": [
        _field("id", "long", "col-id", 1),
        _field("name", "string", "col-name", 2),
        _field("s", INNER, "col-s", 3),
        _field("p", "string", "col-p", 6),
    ],
}


def _metadata(mode: str, schema: dict[str, Any] = SCHEMA) -> Metadata:
    return Metadata(
        id="t",
        schema_string=json.dumps(schema),
        partition_columns=("p",),
        configuration={"delta.columnMapping.mode": mode},
    )


def _write_physical(path: Path, metadata: Metadata) -> None:
    """A data file as a column-mapping writer makes it (physical names and field ids)."""
    physical = to_arrow_schema(parse_schema(metadata.schema_string), physical=True)
    data_schema = pa.schema([f for f in physical if f.name != "col-p"])
    table = pa.table(
        {
            "col-id": pa.array([1, 2], pa.int64()),
            "col-name": ["a", "b"],
            "col-s": pa.array(
                [{"col-x": 1, "col-y": "u"}, None],
                data_schema.field("col-s").type,
            ),
        },
        schema=data_schema,
    )
    pq.write_table(table, path)


def _read(path: Path, metadata: Metadata, **kwargs: Any) -> list[dict[str, Any]]:
    batches = read_data_file(str(path), metadata=metadata, **kwargs)
    return pa.Table.from_batches(list(batches)).to_pylist()


EXPECTED = [
    {"id": 1, "name": "a", "s": {"x": 1, "y": "u"}, "p": "v"},
    {"id": 2, "name": "b", "s": None, "p": "v"},
]


@pytest.mark.parametrize("mode", ["name", "id"])
def test_reads_physical_columns_as_logical(tmp_path: Path, mode: str) -> None:
    metadata = _metadata(mode)
    path = tmp_path / "f.parquet"
    _write_physical(path, metadata)
    assert pq.ParquetFile(path).schema_arrow.field("col-id").metadata == {b"PARQUET:field_id": b"1"}
    assert _read(path, metadata, partition_values={"col-p": "v"}) == EXPECTED


def test_id_mode_matches_field_ids_even_when_names_differ(tmp_path: Path) -> None:
    path = tmp_path / "f.parquet"
    _write_physical(path, _metadata("id"))
    renamed = json.loads(json.dumps(SCHEMA).replace("col-", "other-"))
    got = _read(path, _metadata("id", renamed), partition_values={"other-p": "v"})
    assert got == EXPECTED


def test_name_mode_without_matching_names_reads_nulls(tmp_path: Path) -> None:
    path = tmp_path / "f.parquet"
    _write_physical(path, _metadata("name"))
    renamed = json.loads(json.dumps(SCHEMA).replace("col-name", "col-gone"))
    got = _read(path, _metadata("name", renamed), partition_values={"p": "v"})
    assert [row["name"] for row in got] == [None, None]
    assert [row["p"] for row in got] == ["v", "v"]


def test_column_added_later_reads_as_nulls_and_columns_select(tmp_path: Path) -> None:
    path = tmp_path / "f.parquet"
    _write_physical(path, _metadata("name"))
    evolved = json.loads(json.dumps(SCHEMA))
    evolved["fields"].append(_field("added", "double", "col-added", 7))
    got = _read(path, _metadata("name", evolved), columns=["added", "id"])
    assert got == [{"added": None, "id": 1}, {"added": None, "id": 2}]


def test_without_mapping_logical_names_match_case_insensitively(tmp_path: Path) -> None:
    path = tmp_path / "f.parquet"
    pq.write_table(pa.table({"ID": pa.array([1], pa.int32())}), path)
    schema = {
        "type": "struct",
        "fields": [{"name": "id", "type": "long", "nullable": True, "metadata": {}}],
    }
    metadata = Metadata(id="t", schema_string=json.dumps(schema))
    assert _read(path, metadata) == [{"id": 1}]
