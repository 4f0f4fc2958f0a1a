"""Cleanup of the Iceberg metadata a real server wrote: once versions leave the served range
(the Delta log cleaned up before a checkpoint), ``deltaport iceberg cleanup`` (a second
process on the server's metadata directory, as an operator runs it) removes their manifest
lists, the metadata files no longer served and the manifests only they named; manifests a
kept version shares stay, and the kept versions read the same rows through pyiceberg.
Nothing younger than the grace is removed. An S3 table's ``_deltaport_iceberg/`` prefix is
cleaned the same way. The grace is set to 0 rather than waited for."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import obstore
import pyarrow as pa
import pytest
from deltalake import DeltaTable, write_deltalake
from iceberg_readers import deltalake_read, first_difference
from obstore.store import S3Store
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.table import Table

from catalog_lake import ROWS, storage_entry, write_config, write_lake_table
from deltaport.catalog.model import Recipient, SharedTable
from deltaport.cli import main
from deltaport.config.loading import load_config
from deltaport.config.model import ServerConfig
from deltaport.iceberg.convert.cleanup import WRITTEN
from deltaport.iceberg.convert.tables import IcebergTables
from deltaport.iceberg.rest.sweeper import IcebergSweeper
from deltaport.server.sources.catalog_source import YamlCatalog
from deltaport.storage.uri import parse_location
from emulators import S3Emulator
from sharing_server import TOKEN, RunningServer, start_server, stop_server, table_entry
from waiting import wait_until

WIDE_FILES = 600
"""More files than one manifest holds: two buckets, so a one-file commit keeps one of them."""

BUCKET = "iceberg-cleanup"
CLOUD_ROOT = f"s3://{BUCKET}/tables/events"


def _server_config(tmp: Path, tables: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "version": 1,
        "authorization": {"bearerToken": "${DELTAPORT_TEST_TOKEN}"},
        "signingKey": "a-fixed-key-for-tests",
        "iceberg": {"metadataDirectory": str(tmp / "metadata"), "cleanupIntervalMinutes": 0},
        "shares": [{"name": "Sales", "schemas": [{"name": "d", "tables": tables}]}],
        **extra,
    }


def _cleanup(server: RunningServer, capsys: pytest.CaptureFixture[str], *extra: str) -> list[str]:
    """Run ``deltaport iceberg cleanup`` on the server's configuration; the paths printed."""
    assert (
        main(
            ["iceberg", "cleanup", "--config", str(server.log_path.parent / "server.yaml"), *extra]
        )
        == 0
    )
    out = capsys.readouterr().out
    return [line.strip() for line in out.splitlines() if line.startswith("  ")]


def _manifests(table: Table, snapshot_id: int) -> set[str]:
    snapshot = table.metadata.snapshot_by_id(snapshot_id)
    assert snapshot is not None
    return {m.manifest_path for m in snapshot.manifests(table.io)}


def _catalog(server: RunningServer) -> RestCatalog:
    return RestCatalog("deltaport", uri=server.base + "/iceberg", token=TOKEN, warehouse="Sales")


def _drop_first_commit(root: Path) -> None:
    """The log cleaned up before its checkpoint at version 1: version 0 is gone."""
    (root / "_delta_log" / f"{0:020d}.json").unlink()


def write_wide_table(root: Path, files: int = WIDE_FILES) -> Path:
    """Version 0 adds ``files`` files (one per partition), versions 1 and 2 one file
    each; a checkpoint at version 1."""
    first = pa.table({"id": pa.array(range(files), pa.int64())})
    write_deltalake(str(root), first.append_column("p", first.column("id")), partition_by=["p"])
    for version in (1, 2):
        row = pa.table({"id": pa.array([1000 + version], pa.int64())})
        row = row.append_column("p", row.column("id"))
        write_deltalake(str(root), row, mode="append", partition_by=["p"])
        if version == 1:
            DeltaTable(str(root)).create_checkpoint()
    return root


@pytest.fixture
def wide_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[RunningServer]:
    monkeypatch.setenv("DELTAPORT_TEST_TOKEN", TOKEN)  # the cleanup reads the same file
    root = write_wide_table(tmp_path / "wide")
    entry = table_entry("wide", root, historyShared=True)
    running = start_server(_server_config(tmp_path, [entry]), tmp_path / "server")
    yield running
    stop_server(running)


def test_versions_out_of_the_log_lose_their_files_and_shared_manifests_stay(
    wide_server: RunningServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "wide"
    before = _catalog(wide_server).load_table("d.wide")
    assert [s.snapshot_id for s in before.metadata.snapshots] == [1, 2, 3]
    first_list = before.metadata.snapshot_by_id(1).manifest_list  # type: ignore[union-attr]
    first, kept = _manifests(before, 1), _manifests(before, 2) | _manifests(before, 3)
    shared = first & kept
    assert shared and first - kept  # a bucket kept by version 1, one it cut again
    _drop_first_commit(root)
    after = _catalog(wide_server).load_table("d.wide")
    assert [s.snapshot_id for s in after.metadata.snapshots] == [2, 3]

    # everything is younger than the default grace (24 hours): nothing goes
    assert _cleanup(wide_server, capsys) == []
    assert Path(first_list).exists()

    removed = _cleanup(wide_server, capsys, "--retain-hours", "0")
    assert first_list in removed
    assert before.metadata_location in removed  # served no more: the table changed since
    assert set(removed) >= first - kept
    assert not set(removed) & (kept | {after.metadata_location})
    for path in [*removed, first_list, *(first - kept)]:
        assert not Path(path).exists(), path
    for path in [*shared, after.metadata_location]:
        assert Path(path).exists(), path

    again = _catalog(wide_server).load_table("d.wide")
    assert again.metadata_location == after.metadata_location
    for snapshot in again.metadata.snapshots:
        version = int(snapshot.summary["delta.version"])  # type: ignore[index]
        got = again.scan(snapshot_id=snapshot.snapshot_id).to_arrow()
        assert first_difference(got, deltalake_read(str(root), None, version)) is None
    # a second sweep finds nothing more to remove
    assert _cleanup(wide_server, capsys, "--retain-hours", "0") == []


def test_a_dry_run_removes_nothing(
    wide_server: RunningServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _catalog(wide_server).load_table("d.wide")
    _drop_first_commit(tmp_path / "wide")
    loaded = _catalog(wide_server).load_table("d.wide")
    listed = _cleanup(wide_server, capsys, "--retain-hours", "0", "--dry-run")
    assert listed and all(Path(p).exists() for p in listed)
    assert loaded.metadata_location not in listed


def test_a_restarted_server_serves_the_same_metadata(
    iceberg_tables: dict[str, Path], tmp_path: Path
) -> None:
    """What a cleanup keeps is what the server serves: a second process (a restart, the
    cleanup command) makes the same metadata file from the same directory, format version
    and row lineage of a deletion-vector table included."""
    location = parse_location(str(iceberg_tables["dv"]))
    table = SharedTable("s", "d", "dv", location, {})
    first = IcebergTables(tmp_path).load(table)
    second = IcebergTables(tmp_path).load(table)
    assert first.metadata["format-version"] == 3
    assert second.metadata_location == first.metadata_location


def test_a_restarted_server_builds_new_versions_beside_the_old(tmp_path: Path) -> None:
    root = tmp_path / "t"
    write_deltalake(str(root), pa.table({"id": pa.array([1], pa.int64())}))
    table = SharedTable("s", "d", "t", parse_location(str(root)), {}, history_shared=True)
    IcebergTables(tmp_path / "metadata").load(table)
    write_deltalake(str(root), pa.table({"id": pa.array([2], pa.int64())}), mode="append")
    loaded = IcebergTables(tmp_path / "metadata").load(table)  # reads the manifest index
    assert [s["snapshot-id"] for s in loaded.metadata["snapshots"]] == [1, 2]


def test_a_version_the_log_no_longer_holds_is_served_no_more(tmp_path: Path) -> None:
    root = write_wide_table(tmp_path / "wide")
    table = SharedTable("s", "d", "t", parse_location(str(root)), {}, history_shared=True)
    tables = IcebergTables(tmp_path / "metadata")
    assert [s["snapshot-id"] for s in tables.load(table).metadata["snapshots"]] == [1, 2, 3]
    _drop_first_commit(root)
    assert [s["snapshot-id"] for s in tables.load(table).metadata["snapshots"]] == [2, 3]


def test_the_sweep_keeps_files_through_the_grace_and_drops_unshared_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server's sweep on a clock of its own: nothing goes during the grace (24 hours),
    a version out of the log after it; once the table is in no share, all its files."""
    monkeypatch.setenv("DELTAPORT_TEST_TOKEN", TOKEN)
    root = write_wide_table(tmp_path / "wide", 3)
    entry = table_entry("wide", root, historyShared=True)
    config_path = write_config(tmp_path / "server.yaml", _server_config(tmp_path, [entry]))
    config = load_config(config_path)
    tables = IcebergTables(tmp_path / "metadata")
    now = [time.time()]

    def sweeper(config: ServerConfig) -> IcebergSweeper:
        source = YamlCatalog(config)
        return IcebergSweeper(source, tables, 24 * 3600, lambda _: {}, clock=lambda: now[0])

    (shared,) = YamlCatalog(config).view().tables(Recipient("r"), "Sales", "d")
    first_list = tables.load(shared).metadata["snapshots"][0]["manifest-list"]
    _drop_first_commit(root)
    assert [t.removed for t in sweeper(config).sweep()] == [[]]
    now[0] += 25 * 3600
    (swept,) = sweeper(config).sweep()
    assert first_list in swept.removed and not Path(first_list).exists()
    kept = _iceberg_files(tmp_path / "metadata")
    assert kept  # the served versions' files

    unshared = msgspec.structs.replace(config, shares=[])
    (swept,) = sweeper(unshared).sweep()
    assert sorted(swept.removed) == sorted(kept)
    assert _iceberg_files(tmp_path / "metadata") == []


def test_the_server_sweeps_in_the_background(tmp_path: Path) -> None:
    root = write_wide_table(tmp_path / "wide", 3)
    config = _server_config(tmp_path, [table_entry("wide", root, historyShared=True)])
    config["iceberg"].update({"cleanupIntervalMinutes": 0.005, "retainHours": 0})
    server = start_server(config, tmp_path / "server")
    try:
        loaded = _catalog(server).load_table("d.wide")
        first_list = loaded.metadata.snapshot_by_id(1).manifest_list  # type: ignore[union-attr]
        _drop_first_commit(root)
        after = _catalog(server).load_table("d.wide")
        # a sweep every 0.3 seconds: within a few
        wait_until(lambda: not Path(first_list).exists(), 60, "the sweep of the first commit")
        assert Path(after.metadata_location).exists()
        assert "Iceberg file" in server.log_path.read_text()
    finally:
        stop_server(server)


def _iceberg_files(directory: Path) -> list[str]:
    """The files readers open, in every table's folder of a metadata directory."""
    return [
        str(p)
        for folder in directory.iterdir()
        for p in folder.rglob("*")
        if WRITTEN.fullmatch(p.relative_to(folder).as_posix())
    ]


@pytest.fixture
def cloud_server(
    s3_emulator: S3Emulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[RunningServer]:
    monkeypatch.setenv("DELTAPORT_TEST_TOKEN", TOKEN)
    s3_emulator.create_bucket(BUCKET)
    write_lake_table(s3_emulator, CLOUD_ROOT)
    entry = table_entry("events", CLOUD_ROOT, accessModes=["url", "dir"], historyShared=True)
    config = _server_config(tmp_path, [entry], storage=[storage_entry(s3_emulator, BUCKET)])
    running = start_server(config, tmp_path / "server")
    yield running
    stop_server(running)


def _objects(s3: S3Emulator) -> set[str]:
    store = S3Store(BUCKET, config=s3.options)  # type: ignore[arg-type]
    prefix = "tables/events/_deltaport_iceberg/"
    return {f"s3://{BUCKET}/{m['path']}" for b in obstore.list(store, prefix) for m in b}


def test_an_s3_tables_prefix_is_cleaned(
    cloud_server: RunningServer, s3_emulator: S3Emulator, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _catalog(cloud_server).load_table("d.events")
    for version in (1, 2):
        rows = pa.Table.from_pylist([{**ROWS[0], "id": 100 + version}])
        options = s3_emulator.deltalake_options
        write_deltalake(
            CLOUD_ROOT, rows, mode="append", partition_by=["region"], storage_options=options
        )
        if version == 1:
            DeltaTable(CLOUD_ROOT, storage_options=options).create_checkpoint()
    store = S3Store(BUCKET, config=s3_emulator.options)  # type: ignore[arg-type]
    obstore.delete(store, f"tables/events/_delta_log/{0:020d}.json")
    after = _catalog(cloud_server).load_table("d.events")
    assert [s.snapshot_id for s in after.metadata.snapshots] == [2, 3]
    first_list = before.metadata.snapshot_by_id(1).manifest_list  # type: ignore[union-attr]
    assert {first_list, before.metadata_location} <= _objects(s3_emulator)

    removed = _cleanup(cloud_server, capsys, "--retain-hours", "0")
    assert {first_list, before.metadata_location} <= set(removed)
    left = _objects(s3_emulator)
    assert not left & set(removed)
    assert after.metadata_location in left
    again = _catalog(cloud_server).load_table("d.events")
    for snapshot in again.metadata.snapshots:
        version = int(snapshot.summary["delta.version"])  # type: ignore[index]
        got = again.scan(snapshot_id=snapshot.snapshot_id).to_arrow()
        assert (
            first_difference(
                got, deltalake_read(CLOUD_ROOT, s3_emulator.deltalake_options, version)
            )
            is None
        )
    records = [json.loads(line) for line in _bookkeeping(cloud_server, "snapshots.jsonl")]
    assert sorted(r["entry"]["version"] for r in records) == [1, 2]


def _bookkeeping(server: RunningServer, name: str) -> list[str]:
    """The lines of a bookkeeping file of the server's (only) table."""
    (directory,) = (server.log_path.parent.parent / "metadata").iterdir()
    return (directory / name).read_text().splitlines()
