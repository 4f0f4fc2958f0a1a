"""End to end: branches written with deltalake, diffed through the public API."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from deltalake import DeltaTable, TableFeatures

from deltaport.diff import (
    ColumnChange,
    InvalidBaseVersionError,
    InvalidPageTokenError,
    OperationType,
    PropertyChange,
    TableDiffType,
    TablesNotFoundError,
    UnknownTableFormatError,
    diff_tables,
)
from difftables import branch, commit_file, write


@pytest.fixture
def main(tmp_path: Path) -> Path:
    """A table with three commits (versions 0..2) and 6 rows."""
    path = tmp_path / "main"
    write(path, {"id": [1, 2, 3], "v": ["a", "b", "c"]})
    write(path, {"id": [4, 5], "v": ["d", "e"]})
    write(path, {"id": [6], "v": ["f"]})
    return path


def test_branch_with_appends_delete_merge_and_schema_change(main: Path, tmp_path: Path) -> None:
    exp = branch(main, tmp_path / "exp")
    write(exp, {"id": [7, 8], "v": ["g", "h"]})
    DeltaTable(str(exp)).delete("id = 1")
    source = DeltaTable(str(exp))
    import pyarrow as pa

    (
        source.merge(
            pa.table({"id": [2, 9], "v": ["B", "i"]}),
            predicate="t.id = s.id",
            source_alias="s",
            target_alias="t",
        )
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .execute()
    )
    write(exp, {"id": [10], "v": ["j"], "score": [0.5]}, schema_mode="merge")
    write(main, {"id": [100], "v": ["x"]})

    result = diff_tables(str(main), str(exp))

    assert result.table_diff_type is TableDiffType.CHANGED
    assert result.table_format == "delta"
    assert result.base_version == 2
    assert (result.left_version, result.right_version) == (3, 6)
    assert [e.id for e in result.results] == [6, 5, 4, 3]
    assert [e.operation for e in result.results] == ["WRITE", "MERGE", "DELETE", "WRITE"]
    assert [e.operation_type for e in result.results] == [
        OperationType.UPDATE,
        OperationType.UPDATE,
        OperationType.DELETE,
        OperationType.UPDATE,
    ]
    delete = result.results[2]
    assert delete.operation_content["operation_parameters"] == {"predicate": "id = 1"}
    assert delete.operation_content["operation_metrics"]["num_deleted_rows"] == 1

    right = result.right
    assert right is not None
    assert (right.commits, right.first_version, right.last_version) == (4, 3, 6)
    # 6 rows at base; +2 appended, -1 deleted, +1 inserted by merge, +1 appended.
    assert right.net_rows == 3
    assert right.rows_added == 4
    assert right.rows_removed == 1
    assert right.files_without_row_counts == 0
    assert right.schema_changes == (ColumnChange("added", "score", after="double"),)
    left = result.left
    assert left is not None
    assert (left.commits, left.files_added, left.rows_added, left.net_rows) == (1, 1, 1, 1)
    assert left.schema_changes == ()
    assert result.notes == ()
    assert result.next_page_token is None
    # the base is found by a binary search: the logs are read from it, not whole (4 + 7)
    assert result.metrics.log_entries_read < 4 + 7
    assert result.metrics.run_time_ms > 0


def test_overwrite_on_branch(main: Path, tmp_path: Path) -> None:
    exp = branch(main, tmp_path / "exp")
    write(exp, {"id": [1, 2], "v": ["a", "b"]}, mode="overwrite")
    result = diff_tables(str(main), str(exp))
    right = result.right
    assert right is not None
    assert (right.files_added, right.files_removed) == (1, 3)
    assert (right.rows_added, right.rows_removed, right.net_rows) == (0, 4, -4)
    assert result.results[0].operation_content["operation_parameters"]["mode"] == "Overwrite"


def test_same_table_has_no_differences(main: Path, tmp_path: Path) -> None:
    copy = branch(main, tmp_path / "copy")
    for right in (main, copy):
        result = diff_tables(str(main), str(right))
        assert result.table_diff_type is TableDiffType.NONE
        assert result.results == ()
        assert result.base_version == 2
        assert result.left is not None and result.left.commits == 0
        assert result.right is not None and result.right.net_rows == 0


def test_only_left_moved_is_changed_with_no_results(main: Path, tmp_path: Path) -> None:
    exp = branch(main, tmp_path / "exp")
    write(main, {"id": [9], "v": ["z"]})
    result = diff_tables(str(main), str(exp))
    assert result.table_diff_type is TableDiffType.CHANGED
    assert result.results == ()
    assert result.left is not None and result.left.commits == 1


def test_created_lists_the_whole_right_history(main: Path, tmp_path: Path) -> None:
    result = diff_tables(str(tmp_path / "absent"), str(main))
    assert result.table_diff_type is TableDiffType.CREATED
    assert [e.id for e in result.results] == [2, 1, 0]
    assert result.results[-1].operation_type is OperationType.CREATE
    assert result.base_version is None
    assert result.left is None
    right = result.right
    assert right is not None
    assert (right.files_added, right.rows_added, right.net_rows) == (3, 6, 6)
    assert {c.column for c in right.schema_changes} == {"id", "v"}
    assert right.protocol_change is not None and right.protocol_change.before is None


def test_dropped_lists_the_whole_left_history(main: Path, tmp_path: Path) -> None:
    empty = tmp_path / "emptied"
    empty.mkdir()
    result = diff_tables(str(main), str(empty))
    assert result.table_diff_type is TableDiffType.DROPPED
    assert [e.id for e in result.results] == [2, 1, 0]
    assert result.right is None
    assert result.left is not None and result.left.rows_added == 6
    assert result.notes == ()
    with_base = diff_tables(str(main), str(empty), base_version=1)
    assert with_base.notes == ("The base version was ignored: the table exists on one side only.",)


def test_no_table_on_either_side(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    with pytest.raises(UnknownTableFormatError):
        diff_tables(str(tmp_path / "a"), str(tmp_path / "b"))
    with pytest.raises(TablesNotFoundError):
        diff_tables(str(tmp_path / "a"), str(tmp_path / "b"), table_format="delta")


def test_unknown_format_name(main: Path) -> None:
    with pytest.raises(UnknownTableFormatError, match="hudi"):
        diff_tables(str(main), str(main), table_format="hudi")


def test_explicit_base_version(main: Path, tmp_path: Path) -> None:
    exp = branch(main, tmp_path / "exp")
    write(exp, {"id": [7], "v": ["g"]})
    result = diff_tables(str(main), str(exp), base_version=0)
    assert result.base_version == 0
    assert [e.id for e in result.results] == [3, 2, 1]
    assert result.left is not None and result.left.commits == 2
    right = result.right
    assert right is not None and right.rows_added == 4
    with pytest.raises(InvalidBaseVersionError):
        diff_tables(str(main), str(exp), base_version=3)


def test_paging_with_small_limit(main: Path, tmp_path: Path) -> None:
    exp = branch(main, tmp_path / "exp")
    for i in range(5):
        write(exp, {"id": [10 + i], "v": ["n"]})
    first = diff_tables(str(main), str(exp), limit=2)
    assert [e.id for e in first.results] == [7, 6]
    assert first.next_page_token is not None
    write(exp, {"id": [99], "v": ["late"]})  # later commits do not shift the pages
    second = diff_tables(str(main), str(exp), limit=2, page_token=first.next_page_token)
    assert [e.id for e in second.results] == [5, 4]
    assert second.right_version == 7
    assert second.next_page_token is not None
    third = diff_tables(str(main), str(exp), limit=2, page_token=second.next_page_token)
    assert [e.id for e in third.results] == [3]
    assert third.next_page_token is None
    assert third.right is not None and third.right.commits == 5


def test_bad_page_tokens(main: Path, tmp_path: Path) -> None:
    exp = branch(main, tmp_path / "exp")
    write(exp, {"id": [7], "v": ["g"]})
    write(exp, {"id": [8], "v": ["h"]})
    with pytest.raises(InvalidPageTokenError):
        diff_tables(str(main), str(exp), page_token="garbage")
    token = diff_tables(str(main), str(exp), limit=1).next_page_token
    assert token is not None
    with pytest.raises(InvalidPageTokenError, match="other tables"):
        diff_tables(str(exp), str(main), page_token=token)
    with pytest.raises(InvalidPageTokenError, match="base version"):
        diff_tables(str(main), str(exp), base_version=0, page_token=token)
    with pytest.raises(ValueError, match="limit"):
        diff_tables(str(main), str(exp), limit=0)


def test_cleaned_up_log_on_one_side(main: Path, tmp_path: Path) -> None:
    exp = branch(main, tmp_path / "exp")
    write(exp, {"id": [7], "v": ["g"]})
    write(exp, {"id": [8], "v": ["h"]})
    DeltaTable(str(exp)).create_checkpoint()  # at version 4
    for version in (0, 1):
        commit_file(exp, version).unlink()
    write(exp, {"id": [9], "v": ["i"]})

    result = diff_tables(str(main), str(exp))
    assert result.table_diff_type is TableDiffType.CHANGED
    assert result.base_version == 2
    assert [e.id for e in result.results] == [5, 4, 3]
    assert any("searched from version 2" in n for n in result.notes)
    # Version 3 is still in the log but cannot be rebuilt without commits 0 and 1.
    assert any("from version 4" in n for n in result.notes)
    assert result.right is not None and result.right.commits == 3
    assert result.right.rows_added == 2

    for version in (2, 3):
        commit_file(exp, version).unlink()
    result = diff_tables(str(main), str(exp))
    assert result.base_version is None
    assert [e.id for e in result.results] == [5, 4]
    assert any("share no version" in n for n in result.notes)


def test_property_and_protocol_changes(main: Path, tmp_path: Path) -> None:
    exp = branch(main, tmp_path / "exp")
    table = DeltaTable(str(exp))
    table.alter.set_table_properties({"delta.appendOnly": "true"})
    table.alter.add_feature(TableFeatures.ChangeDataFeed, allow_protocol_versions_increase=True)
    result = diff_tables(str(main), str(exp))
    right = result.right
    assert right is not None
    assert PropertyChange("delta.appendOnly", None, "true") in right.property_changes
    assert right.protocol_change is not None
    assert right.protocol_change.before is not None
    assert right.protocol_change.after != right.protocol_change.before
    assert result.results[0].operation_type is not OperationType.UNKNOWN


def test_create_or_replace_on_branch(main: Path, tmp_path: Path) -> None:
    exp = branch(main, tmp_path / "exp")
    import pyarrow as pa

    DeltaTable.create(str(exp), pa.schema([("key", pa.string())]), mode="overwrite")
    result = diff_tables(str(main), str(exp))
    entry = result.results[0]
    assert entry.operation == "CREATE OR REPLACE TABLE"
    assert entry.operation_type is OperationType.CREATE
    right = result.right
    assert right is not None
    assert (right.files_removed, right.rows_removed) == (3, 6)
    assert set(right.schema_changes) == {
        ColumnChange("added", "key", after="string"),
        ColumnChange("dropped", "id", before="long"),
        ColumnChange("dropped", "v", before="string"),
    }


def test_diverged_copies_without_common_history(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    write(a, {"id": [1]})
    write(b, {"id": [1]})
    write(b, {"id": [2]})
    result = diff_tables(str(a), str(b))
    assert result.base_version is None
    assert result.table_diff_type is TableDiffType.CHANGED
    assert [e.id for e in result.results] == [1, 0]
    assert any("no common history" in n for n in result.notes)
    shutil.rmtree(a)
