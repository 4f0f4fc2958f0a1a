"""Incremental snapshot updates agree with cold loads and with deltalake."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import deltalake
import pyarrow as pa

from deltaport.delta import DeltaTable, Snapshot, clear_table_cache, open_table


def _same(a: Snapshot, b: Snapshot) -> None:
    assert a.version == b.version
    assert a.protocol == b.protocol and a.metadata == b.metadata
    assert a.timestamp == b.timestamp
    assert a.files.sort_by("path").equals(b.files.sort_by("path"))
    assert (a.num_files, a.size_in_bytes, a.num_records) == (
        b.num_files,
        b.size_in_bytes,
        b.num_records,
    )


def _peer_paths(root: Path) -> set[str]:
    actions = deltalake.DeltaTable(root).get_add_actions(flatten=True)
    return set(actions.column("path").to_pylist())


def test_incremental_updates_match_cold_loads(tmp_path: Path) -> None:
    table = DeltaTable(str(tmp_path))
    steps = [
        lambda: deltalake.write_deltalake(tmp_path, pa.table({"id": [1, 2, 3]}), mode="append"),
        lambda: deltalake.write_deltalake(tmp_path, pa.table({"id": [4, 5]}), mode="append"),
        lambda: deltalake.DeltaTable(tmp_path).delete("id = 2"),
        lambda: deltalake.DeltaTable(tmp_path).create_checkpoint(),
        lambda: deltalake.write_deltalake(tmp_path, pa.table({"id": [6]}), mode="append"),
        lambda: deltalake.write_deltalake(tmp_path, pa.table({"id": [7]}), mode="overwrite"),
        lambda: deltalake.write_deltalake(
            tmp_path,
            pa.table({"id": [8], "name": ["x"]}),
            mode="overwrite",
            schema_mode="overwrite",
        ),
        lambda: deltalake.DeltaTable(tmp_path).optimize.compact(),
    ]
    previous = None
    for step in steps:
        step()
        warm = table.snapshot()
        cold = DeltaTable(str(tmp_path)).snapshot()
        _same(warm, cold)
        assert set(warm.files.column("path").to_pylist()) == _peer_paths(tmp_path)
        assert warm.num_records == deltalake.DeltaTable(tmp_path).to_pyarrow_table().num_rows
        if previous is not None:
            _same(
                table.snapshot(previous.version),
                DeltaTable(str(tmp_path)).snapshot(previous.version),
            )
        previous = warm
    assert "name" in table.snapshot().metadata.schema_string


def test_snapshot_without_new_commits_is_reused(tmp_path: Path) -> None:
    deltalake.write_deltalake(tmp_path, pa.table({"id": [1]}), mode="append")
    table = DeltaTable(str(tmp_path))
    assert table.snapshot() is table.snapshot()
    deltalake.write_deltalake(tmp_path, pa.table({"id": [2]}), mode="append")
    assert table.snapshot().version == 1


def test_open_table_shares_tables_per_location_and_options(tmp_path: Path) -> None:
    clear_table_cache()
    deltalake.write_deltalake(tmp_path, pa.table({"id": [1]}), mode="append")
    first = open_table(str(tmp_path))
    assert open_table(f"file://{tmp_path}") is first
    assert open_table(str(tmp_path), {"x": "y"}) is not first
    clear_table_cache()
    assert open_table(str(tmp_path)) is not first


def test_replaced_table_is_not_served_from_cache(tmp_path: Path) -> None:
    simple = tmp_path / "t"
    deltalake.write_deltalake(simple, pa.table({"id": [1]}), mode="append")
    deltalake.write_deltalake(simple, pa.table({"id": [2]}), mode="append")
    table = DeltaTable(str(simple))
    assert table.snapshot().num_records == 2
    shutil.rmtree(simple)
    deltalake.write_deltalake(simple, pa.table({"id": [1, 2, 3]}), mode="append")
    deltalake.write_deltalake(simple, pa.table({"id": [4, 5, 6]}), mode="append")
    assert table.snapshot().num_records == 6
    assert table.snapshot(0).num_records == 3


def test_concurrent_readers_see_consistent_snapshots(tmp_path: Path) -> None:
    deltalake.write_deltalake(tmp_path, pa.table({"id": [0]}), mode="append")
    table = DeltaTable(str(tmp_path))
    seen: list[tuple[int, int | None]] = []
    errors: list[BaseException] = []
    stop = threading.Event()

    def read() -> None:
        try:
            while not stop.is_set():
                snap = table.snapshot()
                seen.append((snap.version, snap.num_records))
                table.snapshot(0)
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    readers = [threading.Thread(target=read) for _ in range(4)]
    for thread in readers:
        thread.start()
    for i in range(1, 6):
        deltalake.write_deltalake(tmp_path, pa.table({"id": [i]}), mode="append")
    stop.set()
    for thread in readers:
        thread.join()
    assert not errors
    assert all(rows == version + 1 for version, rows in seen)
    assert table.snapshot().version == 5
