"""The manifests written for every corpus table, read back by readers independent of
deltaport (fastavro, and pyiceberg's manifest reader), against what the data files hold
as pyarrow reads them: each file's record count, each top-level column's null count and
bounds (the lower at most the file's minimum, the upper at least its maximum, exact for
integers, dates, decimals and booleans), and each file's partition values as deltalake
reads them from the log; and a new version that changed a few files rewrites only the
manifests of their buckets."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import deltalake
import fastavro
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from deltalake import write_deltalake
from pyiceberg.conversions import from_bytes
from pyiceberg.table import StaticTable
from pyiceberg.types import (
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    PrimitiveType,
    TimestampType,
    TimestamptzType,
)

from corpus import CorpusTable, corpus_tables
from deltaport.catalog.model import SharedTable
from deltaport.delta.errors import DeltaError
from deltaport.iceberg.convert import manifests
from deltaport.iceberg.convert.bounds import StatsColumn, file_metrics
from deltaport.iceberg.convert.column_metrics import MetricColumns, metric_columns
from deltaport.iceberg.convert.tables import IcebergTables
from deltaport.iceberg.errors import UnsupportedTable
from deltaport.storage import StorageError
from deltaport.storage.uri import parse_location

TABLES = [t for t in corpus_tables() if not t.negative and not t.data_missing]
EXACT = (IntegerType, LongType, DateType, DecimalType, BooleanType)
"""Types whose Delta statistics are the file's own minimum and maximum (floats are
stepped outwards, timestamps widened to the millisecond, strings cut)."""


WRONG_STATISTICS = {
    "drs__issue_1374": "the log's timestamp minimum is later than the file's (delta-rs #1374)"
}
"""Tables whose Delta statistics are not true of their files (copied as they are)."""

NOT_BY_NAME = {
    "drs__table_with_null_stats_in_notnull_struct",
    "golden__type-widening-nested",
    "krs__cdf-table-backtick-column-names",
}
"""Tables whose bounds are all on nested columns or on names the files spell otherwise
(compared with the log's statistics only)."""


def _iceberg_value(stat: Any, kind: PrimitiveType) -> Any:
    """A statistic as deltalake reads it, as pyiceberg decodes a bound of ``kind``."""
    if isinstance(kind, DateType) and isinstance(stat, dt.date):
        return (stat - dt.date(1970, 1, 1)).days
    if isinstance(kind, DecimalType) and not isinstance(stat, Decimal):
        return Decimal(str(stat)).quantize(Decimal(1).scaleb(-kind.scale))
    return stat


def _read(path: str) -> tuple[dict[str, bytes], list[dict[str, Any]]]:
    with open(path, "rb") as source:
        reader = fastavro.reader(source)
        return reader.metadata, list(reader)  # type: ignore[return-value]


def _comparable(column: pa.ChunkedArray, kind: PrimitiveType) -> pa.ChunkedArray:
    """The column as the Python values pyiceberg decodes its bounds to (days, micros)."""
    if isinstance(kind, DateType):
        return column.cast(pa.date32()).cast(pa.int32())
    if isinstance(kind, TimestampType | TimestamptzType):
        zone = "UTC" if isinstance(kind, TimestamptzType) else None
        if pa.types.is_timestamp(column.type) and (column.type.tz is None) != (zone is None):
            column = column.cast(pa.timestamp(column.type.unit, zone))
        return column.cast(pa.timestamp("us", zone), safe=False).cast(pa.int64())
    return column


def _check_file(data_file: Any, fields: dict[int, tuple[list[str], PrimitiveType]]) -> int:
    """Compare one data file's manifest entry with the file; the bounds compared."""
    path = data_file.file_path.removeprefix("file://")
    parquet = pq.ParquetFile(path, coerce_int96_timestamp_unit="us")
    assert data_file.record_count == parquet.metadata.num_rows, data_file.file_path
    names = set(parquet.schema_arrow.names)
    checked = 0
    for field_id, (candidates, kind) in fields.items():
        found = [n for n in candidates if n in names]
        if not found:
            continue
        column = parquet.read(columns=[found[0]]).column(0)
        nulls = (data_file.null_value_counts or {}).get(field_id)
        if nulls is not None:
            assert nulls == column.null_count, (data_file.file_path, field_id)
        lower = (data_file.lower_bounds or {}).get(field_id)
        upper = (data_file.upper_bounds or {}).get(field_id)
        if (lower is None and upper is None) or column.null_count == len(column):
            continue
        values = _comparable(column, kind)
        if isinstance(kind, FloatType | DoubleType):
            values = pc.filter(values, pc.invert(pc.is_nan(values)))
        low, high = pc.min(values).as_py(), pc.max(values).as_py()
        where = (data_file.file_path, field_id, kind)
        if lower is not None:
            bound = from_bytes(kind, lower)
            assert bound <= low, where
        if upper is not None:
            bound = from_bytes(kind, upper)
            assert bound >= high, where
        checked += 1
    return checked


def _delta_actions(table: CorpusTable) -> dict[str, list[dict[str, Any]]] | None:
    """Each live file's add action as deltalake reads the log (flattened: ``min.x``,
    ``max.x``, ``partition.x``), by the file's name (several files may share one)."""
    if table.deltalake_reads != "yes":
        return None
    actions = pa.table(deltalake.DeltaTable(str(table.path)).get_add_actions(flatten=True))
    out: dict[str, list[dict[str, Any]]] = {}
    for row in actions.to_pylist():
        out.setdefault(unquote(row["path"].rsplit("/", 1)[-1]), []).append(row)
    return out


def _action_of(actions: dict[str, list[dict[str, Any]]], file_path: str) -> dict[str, Any]:
    found = actions[file_path.rsplit("/", 1)[-1]]
    if len(found) > 1:
        found = [a for a in found if unquote(file_path).endswith("/" + unquote(a["path"]))]
    (action,) = found
    return action


def _same(value: Any, delta: Any) -> bool:
    if isinstance(value, dt.datetime) and isinstance(delta, dt.datetime) and not delta.tzinfo:
        value = value.replace(tzinfo=None)
    return bool(value == delta)


@pytest.mark.parametrize("table", TABLES, ids=[t.name for t in TABLES])
def test_manifests_describe_the_data_files(tmp_path: Path, table: CorpusTable) -> None:
    converter = IcebergTables(tmp_path)
    location = parse_location(str(table.path))
    shared = SharedTable("s", "d", table.name, location, {}, history_shared=True)
    try:
        loaded = converter.load(shared)
    except UnsupportedTable:
        pytest.skip("not offered to Iceberg readers (test_corpus_readers pins why)")
    except (DeltaError, StorageError):
        pytest.skip("deltaport's own reader refuses this table (test_corpus_readers pins why)")
    iceberg = StaticTable.from_metadata(loaded.metadata_location)
    mapping = {m.field_id: m.names for m in iceberg.metadata.name_mapping() or []}
    fields = {
        f.field_id: (list(mapping.get(f.field_id, [f.name])), f.field_type)
        for f in iceberg.schema().fields
        if isinstance(f.field_type, PrimitiveType)
    }
    snapshot = iceberg.current_snapshot()
    assert snapshot is not None
    raw: dict[str, dict[str, Any]] = {}
    for listed in _read(snapshot.manifest_list)[1]:
        if listed["content"] == 0:
            metadata, records = _read(listed["manifest_path"])
            assert metadata["content"] == b"data" or metadata["content"] == "data"
            assert listed["added_files_count"] == len(records)
            assert listed["added_rows_count"] == sum(
                r["data_file"]["record_count"] for r in records
            )
            raw.update({r["data_file"]["file_path"]: r["data_file"] for r in records})
    entries = [
        e.data_file
        for m in snapshot.manifests(iceberg.io)
        if m.content == 0
        for e in m.fetch_manifest_entry(iceberg.io)
    ]
    assert len(entries) == len(raw) == int(snapshot.summary["total-data-files"])
    actions = _delta_actions(table)
    spec = iceberg.spec()
    schema = iceberg.schema()
    checked = 0
    for data_file in entries:
        same = raw[data_file.file_path]  # fastavro reads what pyiceberg reads
        assert same["record_count"] == data_file.record_count
        assert {b["key"]: b["value"] for b in same["upper_bounds"] or []} == (
            data_file.upper_bounds or {}
        )
        if table.name not in WRONG_STATISTICS:
            checked += _check_file(data_file, fields)
        if actions is None:
            continue
        action = _action_of(actions, data_file.file_path)
        partition = list(same["partition"].values())  # in the spec's order
        for position, part in enumerate(spec.fields):
            source = schema.find_field(part.source_id)
            delta = action[f"partition.{source.name}"]
            where = (data_file.file_path, part.name, delta, partition[position])
            assert _same(partition[position], delta), where
        for field_id, (_, kind) in fields.items():
            name = schema.find_column_name(field_id)
            for side, bounds in (("min", data_file.lower_bounds), ("max", data_file.upper_bounds)):
                stat = action.get(f"{side}.{name}")
                if isinstance(kind, EXACT) and stat is not None and field_id in (bounds or {}):
                    where = (data_file.file_path, name, side)
                    assert _same(from_bytes(kind, bounds[field_id]), _iceberg_value(stat, kind)), (
                        where
                    )
    unchecked = NOT_BY_NAME | set(WRONG_STATISTICS)
    assert checked or not any(f.lower_bounds for f in entries) or table.name in unchecked


COLUMNS = [
    StatsColumn(1, "int", ("a",), False),
    StatsColumn(2, "long", ("b",), False),
    StatsColumn(3, "float", ("s", "f"), False),
    StatsColumn(4, "double", ("s", "d"), False),
    StatsColumn(5, "string", ("t",), False),
    StatsColumn(6, "date", ("dt",), False),
    StatsColumn(7, "timestamptz", ("ts",), False),
    StatsColumn(8, "decimal(10,2)", ("dec",), False),
    StatsColumn(9, "boolean", ("bo",), False),
    StatsColumn(10, "int", ("arr", "element"), True),
    StatsColumn(11, "timestamp", ("ntz",), False),
    StatsColumn(12, "binary", ("bin",), False),
]
EDGES = [
    None,
    "",
    "{}",
    '{"numRecords":5,"minValues":{"a":1,"b":-5,"s":{"f":0.1,"d":2.5},"t":"abc",'
    '"dt":"2020-01-02","ts":"2021-01-01T00:00:00.123Z","dec":-1.28,"bo":true,'
    '"ntz":"2021-01-01T00:00:00.123"},"maxValues":{"a":3000000000,"b":5,'
    '"s":{"f":-0.0,"d":-2.5},"t":"abcdefghijabcdefghijabcdefghijabcdef","dt":"2020-01-03",'
    '"ts":"2021-01-01T00:00:01.000Z","dec":1234.56,"bo":false,"ntz":"2021-01-01T00:00:00"},'
    '"nullCount":{"a":0,"s":{"f":1},"arr":3,"bin":2}}',
    '{"numRecords":7,"tightBounds":false,"minValues":{"s":{"f":1e39,"d":0},"t":"x\ufffd",'
    '"dec":0.01},"maxValues":{"t":"x\ufffd","dec":-128,"s":{"f":-1.5}},"nullCount":{"a":1}}',
    '{"numRecords":0,"minValues":{"dec":-256.00,"s":{"f":3.4028235e38}},'
    '"maxValues":{"dec":-129,"s":{"f":-3.4028235e38}}}',
]


@pytest.mark.parametrize(
    "stats",
    [EDGES, [*EDGES, '{"numRecords":1,"minValues":{"a":1.5}}']],
    ids=["columnar", "file by file"],
)
def test_column_metrics_are_the_per_file_metrics(stats: list[str | None]) -> None:
    """Widened bounds (floats stepped out, timestamps to the millisecond's end, cut strings
    and out-of-range values dropped, decimals), counts and tightBounds, column-wise and in
    the per-file fallback (a statistic Arrow cannot take whole)."""
    metrics = metric_columns(pa.array(stats, pa.string()), COLUMNS)
    for row, text in enumerate(stats):
        records, expected = file_metrics(text, COLUMNS)
        assert metrics.records[row] == records
        for name in ("value_counts", "null_counts", "lower_bounds", "upper_bounds"):
            got = {k: v[row].as_py() for k, v in getattr(metrics, name) if v[row].is_valid}
            wanted = getattr(expected, name)
            assert list(got.items()) == list(wanted.items()), (row, name)


def test_a_one_file_commit_reads_only_its_bucket(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a commit of one file, only the files of its bucket have their statistics
    read again (counted); the other manifests are the previous version's."""
    monkeypatch.setattr(manifests, "FILES_PER_MANIFEST", 4)
    parsed: list[int] = []

    def counted(stats: pa.Array, columns: list[StatsColumn]) -> MetricColumns:
        parsed.append(len(stats))
        return metric_columns(stats, columns)

    monkeypatch.setattr(manifests, "metric_columns", counted)
    root = tmp_path / "table"
    rows = pa.table({"id": pa.array(range(40), pa.int64()), "part": [str(i) for i in range(40)]})
    write_deltalake(str(root), rows, partition_by=["part"])
    converter = IcebergTables(tmp_path / "meta")
    shared = SharedTable("s", "d", "t", parse_location(str(root)), {})
    converter.load(shared)
    assert parsed == [40]
    before = set((tmp_path / "meta").rglob("data-*.avro"))
    assert len(before) > 8
    one = pa.table({"id": pa.array([99], pa.int64()), "part": ["new"]})
    write_deltalake(str(root), one, mode="append", partition_by=["part"])
    loaded = converter.load(shared)
    written = set((tmp_path / "meta").rglob("data-*.avro")) - before
    assert len(written) == 1
    assert parsed[1] == len(_read(str(written.pop()))[1]) < 41 // 2
    current = _read(loaded.metadata["snapshots"][-1]["manifest-list"])[1]
    assert sum(m["added_files_count"] for m in current) == 41
