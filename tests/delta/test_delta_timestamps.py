"""Commit timestamps (ICT and file mtimes) and timestamp -> version resolution."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from delta_log_writer import add, commit_info, metadata, protocol, simple_table, write_commit

from corpus import corpus_table
from deltaport.delta import DeltaTable, TimestampOutOfRangeError


def at(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


def test_mtime_based_version_at(tmp_path: Path) -> None:
    simple_table(tmp_path, 3, mtime_step_ms=1_000_000)  # commits at 1e6, 2e6, 3e6 ms
    table = DeltaTable(str(tmp_path))
    assert [table.commit_timestamp(v) for v in range(3)] == [1_000_000, 2_000_000, 3_000_000]
    assert table.version_at(at(2_000_000)) == 1
    assert table.version_at(at(2_999_999)) == 1
    assert table.version_at(at(9_000_000)) == 2
    assert table.version_at(at(1_000_001), at_or_after=True) == 1
    assert table.version_at(at(1_000_000), at_or_after=True) == 0
    assert table.snapshot(timestamp=at(2_500_000)).version == 1
    assert table.snapshot(1).timestamp == 2_000_000


def test_timestamps_out_of_range_say_why(tmp_path: Path) -> None:
    simple_table(tmp_path, 2, mtime_step_ms=1_000_000)
    table = DeltaTable(str(tmp_path))
    with pytest.raises(TimestampOutOfRangeError, match="before the earliest available version 0"):
        table.version_at(at(999_999))
    with pytest.raises(TimestampOutOfRangeError, match="after the latest version 1"):
        table.version_at(at(2_000_001), at_or_after=True)


def test_naive_datetimes_are_utc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    simple_table(tmp_path, 2, mtime_step_ms=1_000_000)
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        table = DeltaTable(str(tmp_path))
        assert table.version_at(datetime(1970, 1, 1, 0, 33, 20)) == 1  # 2_000_000 ms UTC
        assert table.version_at(datetime(1970, 1, 1, 0, 33, 19)) == 0
    finally:
        monkeypatch.undo()
        time.tzset()


def _ict_table(root: Path) -> None:
    """v0, v1 without ICT (mtimes 1e6, 2e6); ICT enabled at v2 with ICTs 5e6, 6e6, 7e6."""
    write_commit(
        root,
        0,
        [commit_info(), protocol(1, 7, writerFeatures=["inCommitTimestamp"]), metadata(), add("a")],
        1_000_000,
    )
    write_commit(root, 1, [commit_info(), add("b")], 2_000_000)
    enabled = metadata(
        **{
            "delta.enableInCommitTimestamps": "true",
            "delta.inCommitTimestampEnablementVersion": "2",
            "delta.inCommitTimestampEnablementTimestamp": "5000000",
        }
    )
    write_commit(root, 2, [commit_info(inCommitTimestamp=5_000_000), enabled], 9_000_000)
    write_commit(root, 3, [commit_info(inCommitTimestamp=6_000_000), add("c")], 1_000)
    write_commit(root, 4, [commit_info(inCommitTimestamp=7_000_000), add("d")], 1_000)


def test_ict_enablement_splits_the_timeline(tmp_path: Path) -> None:
    _ict_table(tmp_path)
    table = DeltaTable(str(tmp_path))
    assert [table.commit_timestamp(v) for v in range(5)] == [
        1_000_000,
        2_000_000,
        5_000_000,
        6_000_000,
        7_000_000,
    ]
    assert table.snapshot().timestamp == 7_000_000
    assert table.version_at(at(4_000_000)) == 1
    assert table.version_at(at(5_000_000)) == 2
    assert table.version_at(at(6_500_000)) == 3
    assert table.version_at(at(99_000_000)) == 4
    assert table.version_at(at(1_500_000), at_or_after=True) == 1
    assert table.version_at(at(2_000_001), at_or_after=True) == 2
    assert table.version_at(at(6_000_001), at_or_after=True) == 4
    with pytest.raises(TimestampOutOfRangeError, match="after the latest version 4"):
        table.version_at(at(7_000_001), at_or_after=True)


def test_history_uses_ict_and_keeps_commit_info(tmp_path: Path) -> None:
    _ict_table(tmp_path)
    history = DeltaTable(str(tmp_path)).history()
    assert [h.version for h in history] == [0, 1, 2, 3, 4]
    assert [h.timestamp for h in history][2:] == [5_000_000, 6_000_000, 7_000_000]
    assert history[3].commit_info["inCommitTimestamp"] == 6_000_000
    assert [h.version for h in DeltaTable(str(tmp_path)).history(1, 2)] == [1, 2]


def test_corpus_ict_table_uses_commit_info_timestamps() -> None:
    path = corpus_table("drs__cdc_ict_table").path
    table = DeltaTable(str(path))
    icts = []
    for v in range(4):
        text = (path / "_delta_log" / f"{v:020d}.json").read_text()
        icts.append(int(text.split('"inCommitTimestamp":')[1].split(",")[0].rstrip("}")))
    assert [table.commit_timestamp(v) for v in range(4)] == icts
    assert [e.timestamp for e in table.changes(0).versions] == icts
    assert table.snapshot().timestamp == icts[-1]
