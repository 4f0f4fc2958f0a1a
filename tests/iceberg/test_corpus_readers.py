"""Every corpus table deltaport offers, converted to Iceberg metadata and read by pyiceberg
and by DuckDB's iceberg extension: the same rows as a reader independent of deltaport says
the table holds (the corpus's expected result, deltalake, or DuckDB's ``delta_scan``), at
the latest version and at the first earlier version the metadata offers.

Nothing is skipped without a name: a table deltaport does not offer is pinned with the
error it is refused with, and a reader's known fault on a correct table is pinned with its
symptom (the independent rows with that fault applied must be what the reader read, so a
deltaport regression on the table still fails; the pin fails once the reader is fixed)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import deltalake
import pyarrow as pa
import pytest
from iceberg_readers import duckdb_arrow, duckdb_connection, first_difference, independent_read
from pyiceberg.table import StaticTable

from corpus import CorpusTable, corpus_tables
from deltaport.catalog.model import SharedTable
from deltaport.delta.errors import UnsupportedFeatureError
from deltaport.iceberg.convert.tables import IcebergTables, LoadedTable
from deltaport.iceberg.errors import UnsupportedTable
from deltaport.storage.store import ObjectNotFoundError
from deltaport.storage.uri import parse_location


def _doubles_through_float32(expected: pa.Table) -> pa.Table:
    """pyiceberg 0.12 passes a double identity-partition value through float32."""
    columns = [
        c.cast(pa.float32()).cast(pa.float64()) if pa.types.is_float64(c.type) else c
        for c in expected.columns
    ]
    return pa.table(columns, names=expected.column_names)


Symptom = Callable[[pa.Table], pa.Table] | tuple[type[BaseException], str] | frozenset[str]

NULL_STRUCT_LISTS = frozenset({"array_of_structs", "map_of_rows"})

READER_FAULTS: dict[tuple[str, str], Symptom] = {
    ("pyiceberg", "drs__delta-0.8.0-numeric-partition"): _doubles_through_float32,
    # a null list of structs read as [] (in a column of its own and in a map's values)
    ("pyiceberg", "golden__parquet-all-types"): NULL_STRUCT_LISTS,
    ("pyiceberg", "golden__parquet-all-types-legacy-format"): NULL_STRUCT_LISTS,
    ("pyiceberg", "golden__table-with-icebegCompatV2Enabled"): NULL_STRUCT_LISTS,
    # INT96 timestamps read as nanoseconds, which wrap after 2262
    ("pyiceberg", "drs__table_with_edge_timestamps"): frozenset({"BIG_DATE"}),
    ("pyiceberg", "krs__with-short-dv"): (ValueError, "Unsupported schema projection"),
    ("duckdb", "golden__parquet-all-types-legacy-format"): (Exception, "list"),
}
"""Readers' own faults on a table whose Iceberg metadata is right (the other reader
reads it correctly), by their symptom: the independent rows with the fault applied, the
only columns read wrong (every other column must be right), or the reader's error type
and a word of its message."""

REFUSED = {
    "golden__spark-variant-checkpoint": "type variant",
    "krs__void-column": "type void",
    "golden__type-widening": "widened from byte to double",
    "krs__type-widening": "widened from byte to double",
    "golden-krs__table-with-columnmapping-mode-id": "have no field id",
    "golden-krs__table-with-columnmapping-mode-name": "have no field id",
    "golden__table-with-columnmapping-mode-id": "have no field id",
    "golden__table-with-columnmapping-mode-name": "have no field id",
    "krs__stats-writing-all-types": "have no field id",
}
"""Tables not offered to Iceberg readers, and why (see docs/iceberg.md)."""

NOT_READ: dict[str, type[Exception]] = {
    "krs__table-with-geo": UnsupportedFeatureError,
    "kdefaults__spark-shredded-variant-preview-delta": UnsupportedFeatureError,
    "spark__variant-stats-nested-no-checkpoint": UnsupportedFeatureError,
    "spark__variant-stats-no-checkpoint": UnsupportedFeatureError,
    "spark__variant-stats-state-reconstruction": UnsupportedFeatureError,
    "spark__variant-stats-with-struct-no-checkpoint": UnsupportedFeatureError,
    # their deletion vector files are not in the corpus
    "spark__partitioned-table-with-dv-large": ObjectNotFoundError,
    "spark__table-with-dv-large": ObjectNotFoundError,
    "spark__table-with-dv-small": ObjectNotFoundError,
    "spark__table-with-dv-special-char": ObjectNotFoundError,
}
"""Tables deltaport's own reader refuses (its own tests pin why), by the error raised."""

NO_INDEPENDENT_READER = {"kbench__basic_catalog_managed", "kdefaults__catalog-owned-preview"}
"""Offered tables no reader but deltaport's reads (each is named: the readers are only
compared with each other there)."""

TABLES = [t for t in corpus_tables() if not t.negative and not t.data_missing]


@pytest.fixture(scope="module")
def converter(tmp_path_factory: pytest.TempPathFactory) -> IcebergTables:
    return IcebergTables(tmp_path_factory.mktemp("iceberg-metadata"))


def _load(converter: IcebergTables, name: str, path: Path) -> LoadedTable | None:
    table = SharedTable("s", "d", name, parse_location(str(path)), {}, history_shared=True)
    if name in NOT_READ:
        with pytest.raises(NOT_READ[name]):
            converter.load(table)
        return None
    try:
        loaded = converter.load(table)
    except UnsupportedTable as exc:
        assert name in REFUSED, f"{name} refused: {exc}"
        assert REFUSED[name] in str(exc)
        return None
    assert name not in REFUSED, f"{name} is offered, but pinned as refused"
    return loaded


def _read(reader: str, loaded: LoadedTable, snapshot_id: int | None = None) -> pa.Table:
    if reader == "pyiceberg":
        return (
            StaticTable.from_metadata(loaded.metadata_location)
            .scan(snapshot_id=snapshot_id)
            .to_arrow()
        )
    con = duckdb_connection()  # a new one: a reader's fatal error ends a connection
    at = f", snapshot_from_id => {snapshot_id}" if snapshot_id is not None else ""
    return duckdb_arrow(con, f"select * from iceberg_scan('{loaded.metadata_location}'{at})")


def _check(reader: str, table: CorpusTable, loaded: LoadedTable, expected: pa.Table) -> None:
    fault = READER_FAULTS.get((reader, table.name))
    if isinstance(fault, tuple):
        kind, words = fault
        with pytest.raises(kind, match=words):
            _read(reader, loaded)
        return
    got = _read(reader, loaded)
    if isinstance(fault, frozenset):
        for column in expected.column_names:
            wrong = first_difference(got.select([column]), expected.select([column]))
            if column in fault:
                assert wrong is not None, f"{reader} now reads {column}: unpin"
            else:
                assert wrong is None, f"{reader} on {table.name}.{column}: {wrong}"
        return
    if fault is not None:
        assert first_difference(got, expected) is not None, f"{reader} now reads it: unpin"
        expected = fault(expected)
    difference = first_difference(got, expected)
    assert difference is None, f"{reader} on {table.name}: {difference}"


@pytest.mark.parametrize("table", TABLES, ids=[t.name for t in TABLES])
def test_readers_read_what_the_table_holds(converter: IcebergTables, table: CorpusTable) -> None:
    loaded = _load(converter, table.name, table.path)
    if loaded is None:
        return
    independent = independent_read(table)
    if independent is None:
        assert table.name in NO_INDEPENDENT_READER, f"no reader but deltaport's reads {table.name}"
        assert first_difference(_read("pyiceberg", loaded), _read("duckdb", loaded)) is None
        return
    assert table.name not in NO_INDEPENDENT_READER
    for reader in ("pyiceberg", "duckdb"):
        _check(reader, table, loaded, independent[1])
    for first in loaded.metadata["snapshots"][:-1]:  # the first whose data files are there
        version = int(first["summary"]["delta.version"])
        try:
            earlier = independent_read(table, version)
        except (OSError, deltalake.exceptions.DeltaError):
            continue
        if earlier is None:
            continue
        for reader in ("pyiceberg", "duckdb"):
            if (reader, table.name) not in READER_FAULTS:
                got = _read(reader, loaded, first["snapshot-id"])
                assert first_difference(got, earlier[1]) is None, f"{reader} at {version}"
        break
