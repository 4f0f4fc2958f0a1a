"""Every corpus table: snapshots load (or fail with a clear DeltaError), and active files
and row counts agree with deltalake at the latest version and at each recorded version."""

from __future__ import annotations

from collections import Counter

import deltalake
import pytest

from corpus import CorpusTable, corpus_tables
from deltaport.delta import FILE_SCHEMA, DeltaError, DeltaTable, LogCorruptError

# Tagged negative upstream because their data files are absent, but their logs are valid:
# a log engine must load them (delta-rs's own notes say "loading expected to succeed").
LOG_VALID_NEGATIVES = {
    "drs-errlog__table_a": 13,
    "drs-errlog__table_b": 13,
    "drs-errlog__table_g": 9999,
}
# Not tagged negative, but the log fragment holds no metaData action at all.
NO_METADATA_FRAGMENTS = {"golden__data-reader-absolute-paths-escaped-chars"}

ALL = corpus_tables()


def _must_fail(table: CorpusTable) -> bool:
    if table.name in LOG_VALID_NEGATIVES:
        return False
    return (
        table.negative
        or table.name.startswith("drs-errlog__")
        or table.name in NO_METADATA_FRAGMENTS
    )


def _refused_features(table: CorpusTable) -> bool:
    return any(f in table.protocol for f in ("variantShredding-preview", "r:geospatial"))


def _rows_by_version(table: CorpusTable) -> dict[int, int]:
    """deltalake's row counts per version from the manifest (DataFusion path first)."""
    if table.deltalake_sql_reads == "yes":
        text = table.row["deltalake_sql_rows_by_version"]
    elif table.deltalake_reads == "yes":
        text = table.deltalake_rows_by_version
    else:
        return {}
    out = {}
    for item in filter(None, text.split(";")):
        version, _, rows = item.partition(":")
        if rows.isdigit():
            out[int(version)] = int(rows)
    return out


@pytest.mark.parametrize("table", ALL, ids=[t.name for t in ALL])
def test_snapshot_loads_or_fails_clearly(table: CorpusTable) -> None:
    dt = DeltaTable(str(table.path))
    if _must_fail(table) or _refused_features(table):
        with pytest.raises(DeltaError) as info:
            dt.snapshot()
        message = str(info.value)
        assert message and "\n" not in message
        return
    snap = dt.snapshot()
    assert snap.version == LOG_VALID_NEGATIVES.get(table.name, table.latest_version)
    assert snap.files.schema.equals(FILE_SCHEMA)
    assert snap.num_files == snap.files.num_rows
    if table.row["active_files"].isdigit():
        assert snap.num_files == int(table.row["active_files"])


COMPARABLE = [
    t for t in ALL if _rows_by_version(t) and not _must_fail(t) and not _refused_features(t)
]


@pytest.mark.parametrize("table", COMPARABLE, ids=[t.name for t in COMPARABLE])
def test_matches_deltalake_per_version(table: CorpusTable) -> None:
    dt = DeltaTable(str(table.path))
    latest = dt.snapshot()
    peer = deltalake.DeltaTable(str(table.path))
    assert peer.version() == latest.version
    assert _paths(latest.files) == set(
        peer.get_add_actions(flatten=True).column("path").to_pylist()
    )
    for version, rows in _rows_by_version(table).items():
        snap = dt.snapshot(version)
        assert snap.version == version
        peer = deltalake.DeltaTable(str(table.path), version=version)
        expected_paths = set(peer.get_add_actions(flatten=True).column("path").to_pylist())
        assert _paths(snap.files) == expected_paths, f"version {version}"
        if snap.num_records is not None:
            assert snap.num_records == rows, f"version {version}"


def _paths(files: object) -> set[str]:
    return set(files.column("path").to_pylist())  # type: ignore[attr-defined]


def test_truncated_gap_before_checkpoint_is_reported() -> None:
    """drs-errlog__table_b lacks commit 7; its checkpoint at 10 covers later versions only."""
    table = next(t for t in ALL if t.name == "drs-errlog__table_b")
    dt = DeltaTable(str(table.path))
    assert dt.snapshot(10).version == 10
    with pytest.raises(LogCorruptError, match="the commit file for version 7 "):
        dt.snapshot(8)


def test_summary_per_feature_tag(capsys: pytest.CaptureFixture[str]) -> None:
    loaded: Counter[str] = Counter()
    refused: Counter[str] = Counter()
    for table in ALL:
        try:
            DeltaTable(str(table.path)).snapshot()
        except DeltaError:
            refused.update(table.tags or {"(untagged)"})
        else:
            loaded.update(table.tags or {"(untagged)"})
    with capsys.disabled():
        print("\nsnapshots per feature tag (loaded / refused):")
        for tag in sorted(set(loaded) | set(refused)):
            print(f"  {tag:38} {loaded[tag]:4} / {refused[tag]}")
    assert sum(1 for t in ALL if not _must_fail(t)) > 200
    assert loaded["checkpoint"] > 0 and loaded["v2-checkpoint"] > 0
