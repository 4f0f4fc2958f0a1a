"""Checkpoint flavours: classic, multi-part, v2 with sidecars (JSON and parquet), parsed stats."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

import deltalake
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from corpus import corpus_table
from deltaport.delta import DeltaTable, LogCorruptError

CHECKPOINT = f"{4:020d}.checkpoint.parquet"


@pytest.fixture
def checkpointed(tmp_path: Path) -> Path:
    """Five appends of two rows, a delta-rs checkpoint at v4, then one more append."""
    for i in range(5):
        deltalake.write_deltalake(tmp_path, pa.table({"id": [i, i + 100]}), mode="append")
    deltalake.DeltaTable(tmp_path).create_checkpoint()
    deltalake.write_deltalake(tmp_path, pa.table({"id": [5, 105]}), mode="append")
    return tmp_path


def _paths(root: Path, version: int | None = None) -> set[str]:
    snap = DeltaTable(str(root)).snapshot(version)
    return set(snap.files.column("path").to_pylist())


def _drop_commits(root: Path, upto: int) -> None:
    for v in range(upto + 1):
        (root / "_delta_log" / f"{v:020d}.json").unlink()


def test_classic_checkpoint_without_older_commits(checkpointed: Path) -> None:
    expected = _paths(checkpointed)
    _drop_commits(checkpointed, 4)
    table = DeltaTable(str(checkpointed))
    assert _paths(checkpointed) == expected and len(expected) == 6
    assert table.snapshot().num_records == 12
    assert table.snapshot(4).num_files == 5


def test_multipart_checkpoint_and_incomplete_sets(checkpointed: Path) -> None:
    expected = _paths(checkpointed)
    log = checkpointed / "_delta_log"
    whole = pq.read_table(log / CHECKPOINT)
    (log / CHECKPOINT).unlink()
    half = whole.num_rows // 2
    part1 = log / f"{4:020d}.checkpoint.0000000001.0000000002.parquet"
    part2 = log / f"{4:020d}.checkpoint.0000000002.0000000002.parquet"
    pq.write_table(whole.slice(0, half), part1)
    pq.write_table(whole.slice(half), part2)
    _drop_commits(checkpointed, 4)
    assert _paths(checkpointed) == expected
    part2.unlink()
    with pytest.raises(LogCorruptError, match="no checkpoint and no commit 0"):
        DeltaTable(str(checkpointed)).snapshot()


def _v2_parts(log: Path) -> tuple[pa.Table, list[dict[str, object]]]:
    """The classic checkpoint's file actions, and its protocol/metaData as JSON actions."""
    whole = pq.read_table(log / CHECKPOINT)
    files = whole.select(["add", "remove"]).filter(
        pc.or_(pc.is_valid(whole.column("add")), pc.is_valid(whole.column("remove")))
    )
    first = (log / f"{0:020d}.json").read_text().splitlines()
    actions = [json.loads(line) for line in first]
    kept = [a for a in actions if "protocol" in a or "metaData" in a]
    return files, kept


def _write_sidecar(log: Path, files: pa.Table) -> str:
    (log / "_sidecars").mkdir(exist_ok=True)
    name = f"{uuid.uuid4()}.parquet"
    pq.write_table(files, log / "_sidecars" / name)
    return name


def test_v2_json_checkpoint_with_sidecars(checkpointed: Path) -> None:
    expected = _paths(checkpointed)
    log = checkpointed / "_delta_log"
    files, actions = _v2_parts(log)
    half = files.num_rows // 2
    sidecars = [_write_sidecar(log, files.slice(0, half)), _write_sidecar(log, files.slice(half))]
    lines = [{"checkpointMetadata": {"version": 4}}, *actions]
    lines += [{"sidecar": {"path": s, "sizeInBytes": 1, "modificationTime": 0}} for s in sidecars]
    top = log / f"{4:020d}.checkpoint.{uuid.uuid4()}.json"
    top.write_text("\n".join(json.dumps(x) for x in lines))
    (log / CHECKPOINT).unlink()
    _drop_commits(checkpointed, 4)
    assert _paths(checkpointed) == expected
    (log / "_sidecars" / sidecars[1]).unlink()
    with pytest.raises(LogCorruptError, match="cannot read checkpoint file"):
        DeltaTable(str(checkpointed)).snapshot()


def test_v2_parquet_checkpoint_with_sidecar(checkpointed: Path) -> None:
    expected = _paths(checkpointed)
    log = checkpointed / "_delta_log"
    files, actions = _v2_parts(log)
    sidecar = _write_sidecar(log, files)
    protocol = next(a["protocol"] for a in actions if "protocol" in a)
    meta = next(a["metaData"] for a in actions if "metaData" in a)
    meta_type = pq.read_table(log / CHECKPOINT).schema.field("metaData").type
    proto_type = pq.read_table(log / CHECKPOINT).schema.field("protocol").type
    meta["configuration"] = list(meta["configuration"].items())  # type: ignore[index,union-attr]
    meta["format"]["options"] = list(meta["format"].get("options", {}).items())  # type: ignore[index]
    top = pa.table(
        {
            "checkpointMetadata": pa.array([{"version": 4}, None, None]),
            "protocol": pa.array([None, protocol, None], proto_type),
            "metaData": pa.array([None, None, meta], meta_type),
            "sidecar": pa.array([None, None, {"path": sidecar, "sizeInBytes": 1}]),
        }
    )
    pq.write_table(top, log / f"{4:020d}.checkpoint.{uuid.uuid4()}.parquet")
    (log / CHECKPOINT).unlink()
    _drop_commits(checkpointed, 4)
    assert _paths(checkpointed) == expected


def test_stats_parsed_become_json_stats(checkpointed: Path) -> None:
    log = checkpointed / "_delta_log"
    whole = pq.read_table(log / CHECKPOINT)
    add = whole.column("add").combine_chunks()
    stats = [json.loads(s) if s else None for s in add.field("stats").to_pylist()]
    parsed_type = pa.struct(
        [
            ("numRecords", pa.int64()),
            ("minValues", pa.struct([("id", pa.int64())])),
            ("maxValues", pa.struct([("id", pa.int64())])),
        ]
    )
    parsed = pa.array(
        [
            None if s is None else {k: s[k] for k in ("numRecords", "minValues", "maxValues")}
            for s in stats
        ],
        parsed_type,
    )
    children = [add.field(f.name) for f in add.type if f.name != "stats"]
    names = [f.name for f in add.type if f.name != "stats"]
    new_add = pa.StructArray.from_arrays(
        [*children, parsed], names=[*names, "stats_parsed"], mask=pc.invert(add.is_valid())
    )
    pq.write_table(
        whole.set_column(whole.schema.get_field_index("add"), "add", new_add), log / CHECKPOINT
    )
    _drop_commits(checkpointed, 4)
    snap = DeltaTable(str(checkpointed)).snapshot()
    assert snap.num_records == 12
    from_checkpoint = [json.loads(s) for s in snap.files.column("stats").to_pylist()]
    assert {(s["minValues"]["id"], s["maxValues"]["id"]) for s in from_checkpoint} == {
        (i, i + 100) for i in range(6)
    }


def test_unreadable_checkpoint_is_corrupt(checkpointed: Path) -> None:
    (checkpointed / "_delta_log" / CHECKPOINT).write_bytes(b"not a parquet file")
    with pytest.raises(LogCorruptError, match=r"unreadable checkpoint file .*checkpoint\.parquet"):
        DeltaTable(str(checkpointed)).snapshot()


def test_stale_or_malformed_last_checkpoint_is_ignored(checkpointed: Path) -> None:
    expected = _paths(checkpointed)
    hint = checkpointed / "_delta_log" / "_last_checkpoint"
    hint.write_text('{"version": 99, "size": 3}')
    assert _paths(checkpointed) == expected
    hint.write_text("{not json")
    assert _paths(checkpointed) == expected
    hint.unlink()
    assert _paths(checkpointed) == expected


def test_log_compaction_files_do_not_change_replay(tmp_path: Path) -> None:
    source = corpus_table("krs__compacted-log-files-table").path
    plain = tmp_path / "plain"
    (plain / "_delta_log").mkdir(parents=True)
    for commit_file in (source / "_delta_log").glob("*.json"):
        if not commit_file.name.endswith(".compacted.json"):
            shutil.copy(commit_file, plain / "_delta_log" / commit_file.name)
    reference = DeltaTable(str(plain))
    for version in range(reference.latest_version() + 1):
        ours = DeltaTable(str(source)).snapshot(version)
        expected = reference.snapshot(version)
        assert ours.files.sort_by("path").equals(expected.files.sort_by("path")), version
        assert (ours.protocol, ours.metadata) == (expected.protocol, expected.metadata)
