"""Log segment selection over synthetic listings."""

from __future__ import annotations

import pytest

from deltaport.delta import LogCorruptError, TableNotFoundError, VersionNotFoundError
from deltaport.delta.log_segment import LogListing
from deltaport.storage import ObjectInfo

UUID = "3a0d65cd-4056-49b8-937b-95f9e3ee90e5"


def listing(*names: str) -> LogListing:
    return LogListing.parse([ObjectInfo(n, 1, 0) for n in sorted(names)], "test")


def commit(v: int) -> str:
    return f"{v:020d}.json"


def test_commits_only_replays_from_zero() -> None:
    seg = listing(*(commit(v) for v in range(3))).segment()
    assert seg.version == 2 and seg.checkpoint is None
    assert [v for v, _ in seg.commits] == [0, 1, 2]


def test_newest_checkpoint_at_or_below_version_is_used() -> None:
    names = [commit(v) for v in range(8)]
    names += [f"{3:020d}.checkpoint.parquet", f"{6:020d}.checkpoint.parquet"]
    lst = listing(*names)
    seg = lst.segment()
    assert seg.checkpoint is not None and seg.checkpoint.version == 6
    assert [v for v, _ in seg.commits] == [7]
    seg5 = lst.segment(5)
    assert seg5.checkpoint is not None and seg5.checkpoint.version == 3
    assert [v for v, _ in seg5.commits] == [4, 5]


def test_incomplete_multipart_checkpoint_is_ignored() -> None:
    names = [commit(v) for v in range(6)]
    names += [
        f"{2:020d}.checkpoint.0000000001.0000000002.parquet",
        f"{2:020d}.checkpoint.0000000002.0000000002.parquet",
        f"{4:020d}.checkpoint.0000000001.0000000003.parquet",
        f"{4:020d}.checkpoint.0000000003.0000000003.parquet",
    ]
    seg = listing(*names).segment()
    assert seg.checkpoint is not None
    assert seg.checkpoint.version == 2 and seg.checkpoint.kind == "multipart"
    assert [f.name[-29:] for f in seg.checkpoint.files] == [
        "0000000001.0000000002.parquet",
        "0000000002.0000000002.parquet",
    ]


def test_v2_checkpoint_names_and_noise_files() -> None:
    names = [commit(v) for v in range(4)]
    names += [
        f"{3:020d}.checkpoint.{UUID}.json",
        f"{1:020d}.crc",
        f"{0:020d}.{3:020d}.compacted.json",
        "_last_checkpoint",
    ]
    seg = listing(*names).segment()
    assert seg.checkpoint is not None and seg.checkpoint.kind == "v2"
    assert seg.checkpoint.version == 3 and seg.commits == ()


def test_gap_after_checkpoint_is_corrupt() -> None:
    names = [commit(v) for v in (0, 1, 2, 4)] + [f"{2:020d}.checkpoint.parquet"]
    with pytest.raises(LogCorruptError, match="the commit file for version 3 "):
        listing(*names).segment()


def test_gap_without_checkpoint_is_corrupt() -> None:
    with pytest.raises(LogCorruptError, match="the commit file for version 1 "):
        listing(commit(0), commit(2)).segment()


def test_truncated_log_starts_at_oldest_checkpoint() -> None:
    names = [commit(v) for v in range(5, 9)] + [f"{6:020d}.checkpoint.parquet"]
    lst = listing(*names)
    assert lst.earliest_version == 6 and lst.latest_version == 8
    assert lst.segment(6).commits == ()
    with pytest.raises(VersionNotFoundError, match=r"available versions: 6\.\.8"):
        lst.segment(5)


def test_no_checkpoint_and_no_commit_zero_is_corrupt() -> None:
    with pytest.raises(LogCorruptError, match="no checkpoint and no commit 0"):
        listing(commit(3), commit(4)).segment()


def test_version_beyond_latest() -> None:
    with pytest.raises(VersionNotFoundError, match=r"version 9 does not exist.*0\.\.1"):
        listing(commit(0), commit(1)).segment(9)


def test_listing_without_log_files_is_not_a_table() -> None:
    with pytest.raises(TableNotFoundError):
        listing("_last_checkpoint", f"{0:020d}.crc")
