"""The row diff (``deltaport diff --rows``) against a brute-force comparison of the two
full tables, on tables written the way users write them."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake

from corpus import corpus_table
from deltaport.cli.diff import cli_main
from deltaport.diff import DiffError
from deltaport.diff.rows.row_diff import diff_rows
from deltaport.diff.rows.row_sources import FULL_COMPARISON_NOTE
from difftables import branch
from rowcheck import actual_changes, expected_changes, full_table


def _rows(ids: range, tag: str) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(list(ids), pa.int64()),
            "region": pa.array(["eu" if i % 2 else "us" for i in ids]),
            "amount": pa.array([float(i) * 1.5 for i in ids]),
            "note": pa.array([f"{tag}-{i}" for i in ids]),
        }
    )


@pytest.fixture
def base(tmp_path: Path) -> Path:
    path = tmp_path / "main"
    for start in range(0, 3000, 500):
        write_deltalake(
            str(path),
            _rows(range(start, start + 500), "v0"),
            mode="append",
            partition_by=["region"],
        )
    return path


def _check(left: Path | str, right: Path | str, key: list[str] | None, **kw: object) -> None:
    diff = diff_rows(str(left), str(right), key=key, **kw)  # type: ignore[arg-type]
    lv, rv = diff.summary.left_version, diff.summary.right_version
    columns = list(diff.summary.compared_columns)
    where = kw.get("where")
    assert where is None or isinstance(where, str)
    lhs, rhs = full_table(str(left), lv, where), full_table(str(right), rv, where)
    expected = expected_changes(lhs, rhs, key, columns)
    assert actual_changes(diff) == expected
    counts = diff.summary
    assert counts.inserted + counts.deleted + counts.updated == diff.changes.num_rows
    return diff  # type: ignore[return-value]


def test_branch_with_deletes_updates_and_appends(base: Path, tmp_path: Path) -> None:
    right = branch(base, tmp_path / "feature")
    table = DeltaTable(str(right))
    table.delete("id < 40")
    table.update(predicate="id >= 1000 AND id < 1010", updates={"note": "'changed'"})
    write_deltalake(
        str(right), _rows(range(5000, 5020), "new"), mode="append", partition_by=["region"]
    )
    diff = _check(base, right, ["id"])
    assert (diff.summary.deleted, diff.summary.updated, diff.summary.inserted) == (40, 10, 20)
    assert diff.summary.base_version == 5 and not diff.summary.full_comparison
    total = len(DeltaTable(str(base)).file_uris())
    # only the rewritten and new files are read, not the table
    assert diff.summary.files_read_left < total / 2
    updated = [c for c in diff.page() if c.change == "updated"]
    assert updated and all(c.changed == ["note"] for c in updated)
    _check(base, right, None)  # the same as whole rows: updates are a delete and an insert
    _check(right, base, ["id"])  # the other direction


def test_both_branches_changed_merge_and_overwrite(base: Path, tmp_path: Path) -> None:
    left = branch(base, tmp_path / "left")
    right = branch(base, tmp_path / "right")
    DeltaTable(str(left)).delete("region = 'eu' AND id < 600")
    source = _rows(range(2990, 3010), "merged")
    (
        DeltaTable(str(right))
        .merge(source, "t.id = s.id", source_alias="s", target_alias="t")
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .execute()
    )
    _check(left, right, ["id"])
    _check(left, right, None)
    overwritten = branch(base, tmp_path / "overwritten")
    write_deltalake(
        str(overwritten), _rows(range(0, 100), "v1"), mode="overwrite", partition_by=["region"]
    )
    _check(base, overwritten, ["id"])


def test_schema_evolution_is_reported(base: Path, tmp_path: Path) -> None:
    right = branch(base, tmp_path / "evolved")
    extra = _rows(range(7000, 7005), "x").append_column("score", pa.array([1, 2, 3, 4, 5]))
    write_deltalake(str(right), extra, mode="append", schema_mode="merge", partition_by=["region"])
    diff = _check(base, right, ["id"])
    assert diff.summary.columns_only_right == ("score",)
    assert diff.summary.inserted == 5 and diff.summary.updated == 0


def test_one_table_at_two_versions_with_columns_and_where(base: Path) -> None:
    DeltaTable(str(base)).update(predicate="id < 100", updates={"amount": "0.0"})
    DeltaTable(str(base)).delete("id >= 2900")
    diff = _check(base, base, ["id"], left_version=3, right_version=7)
    # v3 holds ids 0-1999; v7 adds 2000-2899 and sets amount 0.0 below 100 (id 0 had it)
    assert (diff.summary.deleted, diff.summary.inserted, diff.summary.updated) == (0, 900, 99)
    narrowed = diff_rows(
        str(base),
        str(base),
        key=["id"],
        left_version=5,
        right_version=7,
        columns=["note"],
        where="id < 50",
    )
    assert narrowed.summary.compared_columns == ("id", "note")
    assert narrowed.changes.num_rows == 0  # only amount changed below 50, and it is left out
    amounts = _check(
        base, base, ["id"], left_version=5, right_version=7, columns=["amount"], where="id < 50"
    )
    assert amounts.summary.updated == 49  # ids 1-49 (id 0 already had 0.0)


def test_tables_without_common_history_are_compared_in_full(tmp_path: Path) -> None:
    left, right = tmp_path / "a", tmp_path / "b"
    write_deltalake(str(left), _rows(range(0, 300), "a"))
    write_deltalake(str(right), _rows(range(100, 400), "a"))
    diff = _check(left, right, ["id"])
    assert diff.summary.full_comparison and FULL_COMPARISON_NOTE in diff.summary.notes
    assert (diff.summary.deleted, diff.summary.inserted) == (100, 100)


def test_whole_rows_are_multisets(tmp_path: Path) -> None:
    left = tmp_path / "dups"
    write_deltalake(str(left), pa.table({"a": [1, 1, 2, None], "b": ["x", "x", "y", None]}))
    right = branch(left, tmp_path / "dups2")
    write_deltalake(
        str(right), pa.table({"a": [1, 2, 2, None], "b": ["x", "y", "y", None]}), mode="overwrite"
    )
    diff = _check(left, right, None)
    assert (diff.summary.deleted, diff.summary.inserted) == (1, 1)


def test_nested_nan_equals_nan(tmp_path: Path) -> None:
    nested = pa.struct([("x", pa.float64())])
    left = tmp_path / "nan"
    write_deltalake(
        str(left),
        pa.table({"id": [1, 2], "s": pa.array([{"x": float("nan")}, {"x": 1.0}], nested)}),
    )
    right = branch(left, tmp_path / "nan2")
    write_deltalake(
        str(right),
        pa.table({"id": [1, 2], "s": pa.array([{"x": float("nan")}, {"x": 2.0}], nested)}),
        mode="overwrite",
    )
    diff = _check(left, right, ["id"])
    assert [(c.key, c.changed) for c in diff.page()] == [({"id": 2}, ["s"])]


def test_a_repeated_key_is_refused(tmp_path: Path) -> None:
    left = tmp_path / "k"
    write_deltalake(str(left), pa.table({"id": [1, 2], "v": ["a", "b"]}))
    right = branch(left, tmp_path / "k2")
    # a key repeated among the rows the diff reads (a repeat against rows of files both
    # sides share is not seen: they are never read)
    write_deltalake(str(right), pa.table({"id": [3, 3], "v": ["c", "d"]}), mode="append")
    with pytest.raises(DiffError, match="not unique"):
        diff_rows(str(left), str(right), key=["id"])


def test_a_budget_smaller_than_the_tables_compares_range_by_range(
    base: Path, tmp_path: Path
) -> None:
    right = branch(base, tmp_path / "budget")
    DeltaTable(str(right)).update(predicate="id % 7 = 0", updates={"amount": "-1.0"})
    DeltaTable(str(right)).delete("id % 11 = 0")
    whole = _check(base, right, ["id"])
    assert whole.summary.ranges == 1
    ranged = _check(base, right, ["id"], memory_budget=20_000)
    assert ranged.summary.ranges > 4
    assert ranged.changes.to_pylist() == whole.changes.to_pylist()  # same answer, same order
    rows = _check(base, right, None, memory_budget=20_000)
    assert rows.summary.ranges > 4


@pytest.mark.parametrize(
    ("name", "versions", "deleted"),
    [
        ("golden__dv-with-columnmapping", (3, 15), 12),
        ("golden__dv-partitioned-with-checkpoint", (0, 15), 15),
        ("kdefaults__basic-dv-with-checkpoint", (7, 46), 39),
        ("krs__cdf-table-with-dv", (0, 3), 4),
        ("drs__table_with_deletion_logs", (1, 20), 2),
    ],
)
def test_corpus_tables_with_deletion_vectors_and_column_mapping(
    name: str, versions: tuple[int, int], deleted: int
) -> None:
    """Rows checked against deltalake's SQL read of both versions (deletion vectors and
    column mapping applied by deltalake); the deletes are deltalake's row counts apart."""
    path = corpus_table(name).path
    diff = _check(path, path, None, left_version=versions[0], right_version=versions[1])
    assert (diff.summary.inserted, diff.summary.deleted) == (0, deleted)


def test_cli_json_lines_pages_and_outputs(base: Path, tmp_path: Path, capsys) -> None:
    right = branch(base, tmp_path / "cli")
    DeltaTable(str(right)).update(predicate="id < 5", updates={"note": "'x'"})
    write_deltalake(
        str(right), _rows(range(9000, 9003), "n"), mode="append", partition_by=["region"]
    )
    args = [str(base), str(right), "--rows", "--key", "id", "--json", "--limit", "5"]
    assert cli_main(args) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    summary = lines[0]
    assert (summary["inserted"], summary["deleted"], summary["updated"]) == (3, 0, 5)
    changes = lines[1:6]
    assert {c["change"] for c in changes} <= {"inserted", "deleted", "updated"}
    for change in changes:
        assert set(change) == {"change", "key", "left", "right", "changed"}
        if change["change"] == "updated":
            assert change["changed"] == ["note"] and change["left"]["note"] != "x"
            assert change["right"]["note"] == "x" and set(change["key"]) == {"id"}
    token = lines[6]["nextPageToken"]
    assert cli_main([*args, "--page-token", token]) == 0
    rest = [json.loads(line) for line in capsys.readouterr().out.splitlines()][1:]
    assert len(rest) == 3 and "nextPageToken" not in rest[-1]
    assert cli_main([str(base), str(right), "--rows", "--key", "id"]) == 0
    text = capsys.readouterr().out
    assert "3 inserted, 0 deleted, 5 updated" in text and "note" in text
    out = tmp_path / "changes.parquet"
    assert cli_main([str(base), str(right), "--rows", "--key", "id", "-o", str(out)]) == 0
    assert pq.read_table(out).num_rows == 8
    delta_out = tmp_path / "changes-delta"
    assert cli_main([str(base), str(right), "--rows", "--key", "id", "-o", str(delta_out)]) == 0
    assert DeltaTable(str(delta_out)).to_pyarrow_table().num_rows == 8
    assert full_table(str(delta_out)).num_rows == 8


def test_cli_errors(base: Path, capsys) -> None:
    assert cli_main([str(base), str(base), "--rows", "--key", "nope"]) == 1
    assert "key column 'nope'" in capsys.readouterr().err
    assert cli_main([str(base), str(base), "--rows", "--where", "id = = 1"]) == 1
    assert "--where" in capsys.readouterr().err
    assert cli_main([str(base), str(base), "--rows", "--engine", "abacus"]) == 1
    assert "no row diff engine 'abacus'" in capsys.readouterr().err
    assert cli_main([str(base), str(base), "--rows", "--page-token", "garbage"]) == 1


def test_null_keys_match_null_keys(tmp_path: Path) -> None:
    left = tmp_path / "nulls"
    write_deltalake(
        str(left),
        pa.table({"a": [1, None, None], "b": ["x", "y", None], "v": [1, 2, 3]}),
    )
    right = branch(left, tmp_path / "nulls2")
    write_deltalake(
        str(right),
        pa.table({"a": [1, None, None], "b": ["x", "y", None], "v": [1, 20, 3]}),
        mode="overwrite",
    )
    diff = _check(left, right, ["a", "b"])
    assert (diff.summary.updated, diff.summary.inserted, diff.summary.deleted) == (1, 0, 0)
    assert diff.page()[0].key == {"a": None, "b": "y"}
