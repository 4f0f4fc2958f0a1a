"""The log engine over S3 (moto server on 127.0.0.1): listing, checkpoint, incremental."""

from __future__ import annotations

import deltalake
import pyarrow as pa

from deltaport.delta import DeltaTable
from emulators import S3Emulator, s3_emulator

__all__ = ["s3_emulator"]


def _peer_paths(uri: str, options: dict[str, str]) -> set[str]:
    actions = deltalake.DeltaTable(uri, storage_options=options).get_add_actions(flatten=True)
    return set(actions.column("path").to_pylist())


def test_snapshot_over_s3_with_checkpoint_and_updates(s3_emulator: S3Emulator) -> None:
    s3_emulator.create_bucket("delta-engine")
    uri = "s3://delta-engine/events"
    peer_options = s3_emulator.deltalake_options
    for i in range(3):
        batch = pa.table({"id": [i, i + 10], "p": ["a b", "c%d"]})
        deltalake.write_deltalake(
            uri, batch, partition_by=["p"], mode="append", storage_options=peer_options
        )
    deltalake.DeltaTable(uri, storage_options=peer_options).create_checkpoint()
    deltalake.write_deltalake(
        uri, pa.table({"id": [99], "p": ["a b"]}), mode="append", storage_options=peer_options
    )
    table = DeltaTable(uri, s3_emulator.options)
    snap = table.snapshot()
    assert snap.version == 3 and snap.num_records == 7
    assert set(snap.files.column("path").to_pylist()) == _peer_paths(uri, peer_options)
    assert table.snapshot(1).num_records == 4
    deltalake.DeltaTable(uri, storage_options=peer_options).delete("id = 99")
    updated = table.snapshot()
    assert updated.version == 4 and updated.num_records == 6
    assert set(updated.files.column("path").to_pylist()) == _peer_paths(uri, peer_options)
    assert [h.version for h in table.history()] == [0, 1, 2, 3, 4]
    assert table.commit_timestamp(4) > 0
