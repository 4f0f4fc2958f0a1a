"""Every corpus table deltaport can read, converted to Iceberg metadata and read by
pyiceberg and by DuckDB's iceberg extension: the same rows as deltaport's own reader, at
the latest version and at the first version the metadata offers.

Where a reader is known to read a correct table wrongly, the difference is pinned (and the
test fails once the reader is fixed, so that the pin is removed); where deltaport refuses
to offer a table to Iceberg readers, the reason is pinned too."""

from __future__ import annotations

from pathlib import Path

import pytest
from iceberg_readers import duckdb_arrow, duckdb_connection, first_difference
from pyiceberg.table import StaticTable

from client.compare import direct_read
from corpus import corpus_tables
from deltaport.catalog.model import SharedTable
from deltaport.iceberg.convert.tables import IcebergTables, LoadedTable
from deltaport.iceberg.errors import UnsupportedTable
from deltaport.storage.store import ObjectNotFoundError
from deltaport.storage.uri import parse_location

READER_FAULTS = {
    ("pyiceberg", "drs__delta-0.8.0-numeric-partition"): (
        "pyiceberg 0.12 passes a double identity-partition value through float32"
    ),
    ("pyiceberg", "drs__table_with_edge_timestamps"): (
        "pyiceberg reads INT96 timestamps as nanoseconds, which overflow after 2262"
    ),
    ("pyiceberg", "golden__parquet-all-types"): "pyiceberg reads a null list of structs as []",
    ("pyiceberg", "golden__parquet-all-types-legacy-format"): (
        "pyiceberg reads a null list of structs as []"
    ),
    ("pyiceberg", "golden__table-with-icebegCompatV2Enabled"): (
        "pyiceberg reads a null list of structs as []"
    ),
    ("pyiceberg", "krs__with-short-dv"): (
        "pyiceberg cannot read a file's nanosecond timestamps as microseconds"
    ),
    ("duckdb", "golden__parquet-all-types-legacy-format"): (
        "DuckDB 1.5.5's iceberg extension fails on two-level (legacy) parquet lists"
    ),
}
"""Readers' own faults on a table whose Iceberg metadata is right (the other reader
reads it correctly)."""

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

TABLES = [t for t in corpus_tables() if not t.negative and not t.data_missing]


@pytest.fixture(scope="module")
def converter(tmp_path_factory: pytest.TempPathFactory) -> IcebergTables:
    return IcebergTables(tmp_path_factory.mktemp("iceberg-metadata"))


def _load(converter: IcebergTables, name: str, path: Path) -> LoadedTable | None:
    table = SharedTable("s", "d", name, parse_location(str(path)), {}, history_shared=True)
    try:
        loaded = converter.load(table)
    except UnsupportedTable as exc:
        assert name in REFUSED, f"{name} refused: {exc}"
        assert REFUSED[name] in str(exc)
        return None
    assert name not in REFUSED, f"{name} is offered, but pinned as refused"
    return loaded


def _read(reader: str, loaded: LoadedTable, snapshot_id: int | None = None):  # type: ignore[no-untyped-def]
    if reader == "pyiceberg":
        return (
            StaticTable.from_metadata(loaded.metadata_location)
            .scan(snapshot_id=snapshot_id)
            .to_arrow()
        )
    con = duckdb_connection()
    at = f", snapshot_from_id => {snapshot_id}" if snapshot_id is not None else ""
    return duckdb_arrow(con, f"select * from iceberg_scan('{loaded.metadata_location}'{at})")


@pytest.mark.parametrize("table", TABLES, ids=[t.name for t in TABLES])
def test_readers_read_what_deltaport_reads(converter: IcebergTables, table) -> None:  # type: ignore[no-untyped-def]
    try:
        expected = direct_read(table.path)
    except Exception:
        pytest.skip("deltaport's own reader refuses this table (its own tests pin why)")
    loaded = _load(converter, table.name, table.path)
    if loaded is None:
        return
    for reader in ("pyiceberg", "duckdb"):
        known = READER_FAULTS.get((reader, table.name))
        try:
            difference = first_difference(_read(reader, loaded), expected)
        except Exception as exc:
            difference = f"{type(exc).__name__}: {exc}"
        if known:
            assert difference is not None, f"{reader} now reads {table.name}: unpin it"
        else:
            assert difference is None, f"{reader} on {table.name}: {difference}"
    earlier_snapshots = loaded.metadata["snapshots"][:-1]
    for first in earlier_snapshots:  # the first whose data files are still there
        version = int(first["summary"]["delta.version"])
        try:
            earlier = direct_read(table.path, version)
        except ObjectNotFoundError:
            continue
        for reader in ("pyiceberg", "duckdb"):
            if (reader, table.name) in READER_FAULTS:
                continue
            got = _read(reader, loaded, first["snapshot-id"])
            assert first_difference(got, earlier) is None, f"{reader} at version {version}"
        break
