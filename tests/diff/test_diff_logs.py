"""Diffs of logs written commit by commit, and of real tables from the corpus."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from corpus import CorpusTable, corpus_table, corpus_tables
from deltaport.delta.errors import DeltaError
from deltaport.diff import ColumnChange, OperationType, TableDiffType, diff_tables
from difftables import (
    add_action,
    commit_info,
    copy_log_until,
    new_table_actions,
    write_commit,
)

T0 = 1_700_000_000_000


def _long_history(path: Path, commits: int) -> None:
    write_commit(path, 0, new_table_actions(T0))
    for version in range(1, commits):
        ts = T0 + version
        write_commit(
            path,
            version,
            [commit_info("WRITE", ts, mode="Append"), add_action(f"part-{version}.parquet", 2, ts)],
        )


def test_more_than_a_thousand_commits_are_paged(tmp_path: Path) -> None:
    right = tmp_path / "right"
    _long_history(right, 1206)
    left = copy_log_until(right, tmp_path / "left", 5)

    first = diff_tables(str(left), str(right))
    assert first.base_version == 5
    assert len(first.results) == 1000
    assert first.results[0].id == 1205 and first.results[-1].id == 206
    assert first.next_page_token is not None
    assert first.right is not None
    assert (first.right.commits, first.right.files_added, first.right.rows_added) == (
        1200,
        1200,
        2400,
    )
    # the base is found by a binary search, then each log is read from it: 1 + 1201
    assert first.metrics.log_entries_read == 1 + 1201

    second = diff_tables(str(left), str(right), page_token=first.next_page_token)
    assert [e.id for e in second.results] == list(range(205, 5, -1))
    assert second.next_page_token is None


def test_unknown_operation_and_missing_commit_info(tmp_path: Path) -> None:
    right = tmp_path / "right"
    _long_history(right, 3)
    left = copy_log_until(right, tmp_path / "left", 2)
    write_commit(right, 3, [commit_info("SOME FUTURE OPERATION", T0 + 3, knob="on")])
    write_commit(right, 4, [add_action("no-commit-info.parquet", 1, T0 + 4)])
    write_commit(right, 5, [commit_info("CREATE OR REPLACE TABLE AS SELECT", T0 + 5)])

    result = diff_tables(str(left), str(right))
    by_id = {e.id: e for e in result.results}
    assert by_id[3].operation_type is OperationType.UNKNOWN
    assert by_id[3].operation_content["operation_parameters"] == {"knob": "on"}
    assert by_id[4].operation == "UNKNOWN"
    assert by_id[4].operation_type is OperationType.UNKNOWN
    assert by_id[5].operation_type is OperationType.CREATE
    assert result.right is not None and result.right.rows_added == 1


def test_deletion_vectors_remove_their_cardinality(tmp_path: Path) -> None:
    table = corpus_table("drs__table-with-dv-small")
    before = copy_log_until(table.path, tmp_path / "before", 0)
    result = diff_tables(str(before), str(table.path))
    assert result.table_diff_type is TableDiffType.CHANGED
    assert [(e.id, e.operation, e.operation_type) for e in result.results] == [
        (1, "DELETE", OperationType.DELETE)
    ]
    right = result.right
    assert right is not None
    assert (right.files_added, right.files_removed) == (0, 0)
    assert (right.rows_removed, right.rows_removed_by_deletion_vectors) == (2, 2)
    assert right.net_rows == -2


def test_rename_under_column_mapping(tmp_path: Path) -> None:
    table = corpus_table("drs__table_with_partitioning_mapping")
    before = copy_log_until(table.path, tmp_path / "before", 2)
    result = diff_tables(str(before), str(table.path))
    assert [e.operation for e in result.results] == ["WRITE", "RENAME COLUMN"]
    right = result.right
    assert right is not None
    assert right.schema_changes == (ColumnChange("renamed", "newid", "id", "newid"),)
    # From before column mapping was enabled: matched by physical name, still a rename.
    older = copy_log_until(table.path, tmp_path / "older", 1)
    result = diff_tables(str(older), str(table.path))
    assert result.right is not None
    assert ColumnChange("renamed", "newid", "id", "newid") in result.right.schema_changes
    assert result.right.protocol_change is not None
    keys = {p.key for p in result.right.property_changes}
    assert "delta.columnMapping.mode" in keys


_SHREDDED = "requires unsupported reader feature: variantShredding-preview"
UNDIFFABLE = {
    "kdefaults__spark-shredded-variant-preview-delta": _SHREDDED,
    "spark__variant-stats-nested-no-checkpoint": _SHREDDED,
    "spark__variant-stats-no-checkpoint": _SHREDDED,
    "spark__variant-stats-state-reconstruction": _SHREDDED,
    "spark__variant-stats-with-struct-no-checkpoint": _SHREDDED,
    "krs__table-with-geo": "requires unsupported reader feature: geospatial",
    # the history the differ reads starts at a commit the log has cleaned up
    "drs__table-with-domain-metadata": "commit 108 is no longer in the log (cleaned up)",
    # the corpus holds only commit 1 of this table, which has no metaData
    "golden__data-reader-absolute-paths-escaped-chars": "no metaData action in the log up to",
}
"""Corpus tables the differ cannot read, with the reason it must give."""
EARLIER_UNREADABLE = {
    # commit 0 was cleaned up and the first checkpoint is at version 2: version 1 cannot be
    # rebuilt from what is left
    "drs__checkpoint_with_partitions": "no checkpoint and no commit 0 (earliest commit is 1)",
}
"""Corpus tables whose copy at the version before the latest cannot be rebuilt, and why."""
DIFFED = [t for t in corpus_tables() if not t.negative and t.latest_version is not None]


@pytest.mark.parametrize("table", DIFFED, ids=lambda t: t.name)
def test_corpus_table_against_itself_and_an_earlier_copy(
    table: CorpusTable, tmp_path: Path
) -> None:
    if table.name in UNDIFFABLE:
        with pytest.raises(DeltaError, match=re.escape(UNDIFFABLE[table.name])):
            diff_tables(str(table.path), str(table.path))
        return
    same = diff_tables(str(table.path), str(table.path))
    assert same.table_diff_type is TableDiffType.NONE
    assert same.results == ()
    assert same.base_version == same.right_version
    latest = same.right_version
    assert latest is not None
    if latest == 0:  # the earlier copy is the table before its first commit: none at all
        created = diff_tables(str(tmp_path / "not-yet"), str(table.path))
        assert created.table_diff_type is TableDiffType.CREATED
        assert [e.id for e in created.results] == [0]
        assert (created.base_version, created.right_version) == (None, 0)
        return
    earlier = copy_log_until(table.path, tmp_path / "earlier", latest - 1)
    if table.name in EARLIER_UNREADABLE:
        with pytest.raises(DeltaError, match=re.escape(EARLIER_UNREADABLE[table.name])):
            diff_tables(str(earlier), str(table.path))
        return
    diff = diff_tables(str(earlier), str(table.path))
    assert diff.table_diff_type is TableDiffType.CHANGED
    assert [e.id for e in diff.results] == [latest]
    assert diff.base_version == latest - 1
    assert diff.right is not None and diff.right.commits == 1


def test_pinned_tables_are_diffed() -> None:
    assert set(UNDIFFABLE) | set(EARLIER_UNREADABLE) <= {t.name for t in DIFFED}


def test_removes_without_stats_take_row_counts_from_earlier_adds(tmp_path: Path) -> None:
    right = tmp_path / "right"
    _long_history(right, 3)  # part-1 and part-2, 2 rows each
    left = copy_log_until(right, tmp_path / "left", 2)
    remove = {"remove": {"path": "part-1.parquet", "dataChange": True, "deletionTimestamp": 1}}
    write_commit(
        right,
        3,
        [commit_info("WRITE", T0 + 3, mode="Append"), add_action("part-3.parquet", 5, T0 + 3)],
    )
    write_commit(right, 4, [commit_info("DELETE", T0 + 4), remove])
    remove_new = {"remove": {"path": "part-3.parquet", "dataChange": True}}
    write_commit(right, 5, [commit_info("DELETE", T0 + 5), remove_new])
    unknown = {"remove": {"path": "never-added.parquet", "dataChange": True}}
    write_commit(right, 6, [commit_info("DELETE", T0 + 6), unknown])

    result = diff_tables(str(left), str(right))
    summary = result.right
    assert summary is not None
    assert (summary.files_added, summary.files_removed) == (1, 3)
    assert (summary.rows_added, summary.rows_removed) == (5, 7)
    assert summary.files_without_row_counts == 1


def test_the_base_is_found_reading_few_commits(tmp_path: Path, monkeypatch) -> None:
    from deltaport.delta import DeltaTable
    from deltaport.diff.history.base_search import search_base
    from deltaport.diff.history.commit_log import align

    right = tmp_path / "right"
    _long_history(right, 1206)
    left = copy_log_until(right, tmp_path / "left", 700)
    for version in (701, 702, 703):  # the left branch goes its own way
        ts = T0 + 10_000 + version
        write_commit(
            left,
            version,
            [commit_info("DELETE", ts), add_action(f"left-{version}.parquet", 1, ts)],
        )
    reads: list[int] = []
    real = DeltaTable.commit_infos

    def counted(self: DeltaTable, listing: object, versions: list[int]) -> list:  # type: ignore[type-arg]
        reads.extend(versions)
        return real(self, listing, versions)  # type: ignore[arg-type]

    monkeypatch.setattr(DeltaTable, "commit_infos", counted)
    found = search_base(DeltaTable(str(left)), DeltaTable(str(right)), None, None)
    assert found is not None and found.version == 700
    assert len(reads) <= 2 * 12  # about 2·log2(704) commits, not both logs
    from deltaport.diff.history.delta_differ import _load

    _, left_history = _load(str(left), None, None, None)
    _, right_history = _load(str(right), None, None, None)
    assert align(left_history, right_history).base_version == 700
