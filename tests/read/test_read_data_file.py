"""The per-file reader and file-table scans: sources, batching, limits, CDF columns."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any

import deltalake
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from deltaport.delta.model import CHANGE_SCHEMA, FILE_SCHEMA, Metadata
from deltaport.delta.table import DeltaTable
from deltaport.read import (
    ChangeInfo,
    FileEncoding,
    ReadPlan,
    RowSelection,
    open_data_file,
    read_data_file,
    read_files,
    scan_snapshot,
    table_arrow_schema,
)
from deltaport.read.file_encoding import INT96_AS_READ
from deltaport.storage import Storage

SCHEMA = {
    "type": "struct",
    "fields": [
        {"name": "id", "type": "long", "nullable": True, "metadata": {}},
        {"name": "part", "type": "date", "nullable": True, "metadata": {}},
    ],
}
METADATA = Metadata(id="t", schema_string=json.dumps(SCHEMA), partition_columns=("part",))


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "f.parquet"
    pq.write_table(pa.table({"id": pa.array(range(1000), pa.int64())}), path, row_group_size=300)
    return path


def _rows(batches: Any) -> list[dict[str, Any]]:
    return pa.Table.from_batches(list(batches), schema=table_arrow_schema(METADATA)).to_pylist()


@pytest.mark.parametrize("kind", ["path", "bytes", "native"])
def test_sources(data_file: Path, kind: str) -> None:
    source: Any = {
        "path": str(data_file),
        "bytes": data_file.read_bytes(),
        "native": pa.BufferReader(data_file.read_bytes()),
    }[kind]
    rows = _rows(read_data_file(source, metadata=METADATA, partition_values={"part": "2024-02-29"}))
    assert len(rows) == 1000
    assert rows[999] == {"id": 999, "part": dt.date(2024, 2, 29)}


def test_streams_bounded_batches_and_drops_deleted_rows(data_file: Path) -> None:
    deleted = np.array([0, 299, 300, 999], dtype=np.uint64)
    batches = list(
        read_data_file(
            str(data_file), metadata=METADATA, deletion_vector_rows=deleted, batch_size=100
        )
    )
    assert max(b.num_rows for b in batches) <= 100
    ids = [i for b in batches for i in b.column("id").to_pylist()]
    assert ids == [i for i in range(1000) if i not in {0, 299, 300, 999}]
    assert all(b.column("part").null_count == b.num_rows for b in batches)


def test_column_selection_and_unknown_columns(data_file: Path) -> None:
    batches = list(
        read_data_file(str(data_file), metadata=METADATA, columns=["part"], partition_values={})
    )
    assert batches[0].schema.names == ["part"]
    assert sum(b.num_rows for b in batches) == 1000
    with pytest.raises(ValueError, match="unknown column"):
        list(read_data_file(str(data_file), metadata=METADATA, columns=["nope"]))


def test_change_columns(data_file: Path) -> None:
    change = ChangeInfo(
        commit_version=3, commit_timestamp_ms=1_700_000_000_123, change_type="delete"
    )
    batch = next(read_data_file(str(data_file), metadata=METADATA, change=change))
    assert batch.schema == table_arrow_schema(METADATA, cdf=True)
    row = batch.slice(0, 1).to_pylist()[0]
    assert row["_change_type"] == "delete"
    assert row["_commit_version"] == 3
    assert row["_commit_timestamp"] == dt.datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=dt.UTC)


def test_cdc_files_carry_their_change_type(tmp_path: Path) -> None:
    path = tmp_path / "cdc.parquet"
    pq.write_table(
        pa.table(
            {
                "id": pa.array([1, 1], pa.int64()),
                "_change_type": ["update_preimage", "update_postimage"],
            }
        ),
        path,
    )
    change = ChangeInfo(commit_version=1, commit_timestamp_ms=0, change_type=None)
    batch = next(read_data_file(str(path), metadata=METADATA, change=change))
    assert batch.column("_change_type").to_pylist() == ["update_preimage", "update_postimage"]


def _two_file_table(tmp_path: Path) -> DeltaTable:
    for start in (0, 100):
        data = pa.table({"id": pa.array(range(start, start + 100), pa.int64())})
        deltalake.write_deltalake(str(tmp_path), data, mode="append")
    return DeltaTable(str(tmp_path))


def test_limit_stops_before_opening_later_files(tmp_path: Path) -> None:
    delta = _two_file_table(tmp_path)
    snapshot = delta.snapshot()
    paths = snapshot.files.column("path").to_pylist()
    os.remove(tmp_path / paths[1])
    batches = list(scan_snapshot(snapshot, delta.storage, limit=30))
    assert sum(b.num_rows for b in batches) == 30
    with pytest.raises(FileNotFoundError):
        list(scan_snapshot(snapshot, delta.storage))


def test_limit_zero_and_empty_file_tables(tmp_path: Path) -> None:
    delta = _two_file_table(tmp_path)
    snapshot = delta.snapshot()
    assert list(scan_snapshot(snapshot, delta.storage, limit=0)) == []
    empty = FILE_SCHEMA.empty_table()
    assert list(read_files(empty, snapshot.metadata, delta.storage)) == []


def test_change_read_needs_change_schema(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="CHANGE_SCHEMA"):
        read_files(FILE_SCHEMA.empty_table(), METADATA, Storage(str(tmp_path)), cdf=True)
    assert (
        list(read_files(CHANGE_SCHEMA.empty_table(), METADATA, Storage(str(tmp_path)), cdf=True))
        == []
    )


def test_table_arrow_schema() -> None:
    assert table_arrow_schema(METADATA).names == ["id", "part"]
    assert table_arrow_schema(METADATA, cdf=True).names == [
        "id",
        "part",
        "_change_type",
        "_commit_version",
        "_commit_timestamp",
    ]
    assert table_arrow_schema(METADATA, columns=["part"]).names == ["part"]


def test_counting_rows_reads_no_columns(tmp_path: Path) -> None:
    delta = _two_file_table(tmp_path)
    snapshot = delta.snapshot()
    batches = list(scan_snapshot(snapshot, delta.storage, columns=[]))
    assert all(b.num_columns == 0 for b in batches)
    assert sum(b.num_rows for b in batches) == 200


FLAT = Metadata(
    id="flat",
    schema_string=json.dumps(
        {
            "type": "struct",
            "fields": [
                {"name": "id", "type": "long", "nullable": True, "metadata": {}},
                {"name": "name", "type": "string", "nullable": True, "metadata": {}},
            ],
        }
    ),
)
IDS = pa.array([1, 2, 3], pa.int64())
NAMES = pa.array(["a", None, "c"])


@pytest.mark.parametrize(
    ("written", "expected_names"),
    [
        (pa.table({"id": IDS, "name": NAMES}), ["a", None, "c"]),
        (
            pa.table({"id": IDS, "name": NAMES}).replace_schema_metadata(
                {"org.apache.spark.version": "4.0.0"}
            ),
            ["a", None, "c"],
        ),
        (
            pa.table(
                [IDS, pa.array(["a", "b", "c"])],
                schema=pa.schema(
                    [pa.field("id", pa.int64(), False), pa.field("name", pa.string(), False)]
                ),
            ),
            ["a", "b", "c"],
        ),
        (pa.table({"name": NAMES, "id": IDS}), ["a", None, "c"]),
        (pa.table({"id": IDS, "name": NAMES, "extra": [0.5, 1.5, 2.5]}), ["a", None, "c"]),
        (pa.table({"id": IDS}), [None, None, None]),
        (pa.table({"id": IDS.cast(pa.int32()), "name": NAMES}), ["a", None, "c"]),
    ],
    ids=[
        "as-written",
        "writer-metadata",
        "not-nullable",
        "reordered",
        "extra",
        "missing",
        "narrower",
    ],
)
def test_every_file_layout_gives_the_table_schema(
    tmp_path: Path, written: pa.Table, expected_names: list[str | None]
) -> None:
    """Files whose schema is the table's are passed through, files that only differ in
    metadata or nullability relabelled, the others matched column by column: the batches
    always carry exactly the table's schema."""
    path = tmp_path / "f.parquet"
    pq.write_table(written, path)
    schema = table_arrow_schema(FLAT)
    for deleted, kept in ((None, [0, 1, 2]), (np.array([1], np.uint64), [0, 2])):
        batches = list(read_data_file(str(path), metadata=FLAT, deletion_vector_rows=deleted))
        assert all(b.schema.equals(schema, check_metadata=True) for b in batches)
        table = pa.Table.from_batches(batches, schema=schema)
        assert table.column("id").to_pylist() == [[1, 2, 3][i] for i in kept]
        assert table.column("name").to_pylist() == [expected_names[i] for i in kept]


@pytest.mark.parametrize(
    ("int96", "stored"), [(True, INT96_AS_READ), (False, pa.timestamp("us", "UTC"))]
)
def test_a_file_tells_its_own_encoding_beside_the_table_typed_rows(
    tmp_path: Path, int96: bool, stored: pa.DataType
) -> None:
    """The rows are cast to the table's types; the encoding keeps what the file holds:
    INT96 timestamps as pyarrow reads them by default (naive nanoseconds), UTC-adjusted
    ones as they are, the columns the file lacks, the serialised partition values."""
    fields = [("ts", "timestamp"), ("later", "integer"), ("part", "timestamp")]
    schema = {
        "type": "struct",
        "fields": [{"name": n, "type": t, "nullable": True, "metadata": {}} for n, t in fields],
    }
    metadata = Metadata(id="e", schema_string=json.dumps(schema), partition_columns=("part",))
    zoned = pa.timestamp("us", "UTC")
    stamp = dt.datetime(2024, 3, 1, 10, 0, 0, 123_456, tzinfo=dt.UTC)
    path = tmp_path / "e.parquet"
    pq.write_table(
        pa.table({"ts": pa.array([stamp], zoned)}), path, use_deprecated_int96_timestamps=int96
    )
    plan = ReadPlan.build(metadata)
    raw = {"part": "2024-01-01 00:00:00"}
    part = pa.scalar(dt.datetime(2024, 1, 1, tzinfo=dt.UTC), zoned)
    opened = open_data_file(str(path), plan, {"part": part}, RowSelection(), partition_values=raw)
    rows = pa.Table.from_batches(list(opened.batches), schema=plan.schema)
    assert rows.column("ts").to_pylist() == [stamp]
    assert rows.schema.field("ts").type == zoned
    assert opened.encoding == FileEncoding(
        stored={"ts": stored}, absent=frozenset({"later"}), partition_values=raw
    )
