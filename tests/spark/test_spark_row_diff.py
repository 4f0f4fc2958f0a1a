"""The row diff's Spark engine against the Arrow engine and a brute-force comparison of the
two full tables, in a real local SparkSession; and ``deltaport.spark.diff_rows``."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable, write_deltalake
from pyspark.sql import SparkSession

import deltaport.spark
from corpus import corpus_table
from deltaport.cli.diff import cli_main
from deltaport.diff import DiffError
from deltaport.diff.rows.row_diff import RowDiff, diff_rows
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


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("rows") / "main"
    for start in range(0, 3000, 500):
        write_deltalake(
            str(path),
            _rows(range(start, start + 500), "v0"),
            mode="append",
            partition_by=["region"],
        )
    return path


def _check(
    spark: SparkSession, left: Path, right: Path, key: list[str] | None, **kw: Any
) -> RowDiff:
    """Both engines' answers, checked against each other and the brute-force answer."""
    on_spark = diff_rows(str(left), str(right), key=key, engine="spark", **kw)
    on_arrow = diff_rows(str(left), str(right), key=key, engine="arrow", **kw)
    assert on_spark.summary == replace(on_arrow.summary, engine="spark")
    assert on_spark.changes.schema == on_arrow.changes.schema
    if key:
        # in key order; compared as text, where NaN equals NaN
        assert str(on_spark.changes.to_pylist()) == str(on_arrow.changes.to_pylist())
    assert actual_changes(on_spark) == actual_changes(on_arrow)
    summary = on_spark.summary
    columns = list(summary.compared_columns)
    lhs = full_table(str(left), summary.left_version, kw.get("where"))
    rhs = full_table(str(right), summary.right_version, kw.get("where"))
    assert actual_changes(on_spark) == expected_changes(lhs, rhs, key, columns)
    return on_spark


def test_branch_with_deletes_updates_and_appends(
    spark: SparkSession, base: Path, tmp_path: Path
) -> None:
    right = branch(base, tmp_path / "feature")
    table = DeltaTable(str(right))
    table.delete("id < 40")
    table.update(predicate="id >= 1000 AND id < 1010", updates={"note": "'changed'"})
    write_deltalake(
        str(right), _rows(range(5000, 5020), "new"), mode="append", partition_by=["region"]
    )
    diff = _check(spark, base, right, ["id"])
    assert (diff.summary.deleted, diff.summary.updated, diff.summary.inserted) == (40, 10, 20)
    _check(spark, base, right, None)
    _check(spark, right, base, ["id"])


def test_both_branches_changed_with_a_merge(
    spark: SparkSession, base: Path, tmp_path: Path
) -> None:
    left = branch(base, tmp_path / "left")
    right = branch(base, tmp_path / "right")
    DeltaTable(str(left)).delete("region = 'eu' AND id < 600")
    (
        DeltaTable(str(right))
        .merge(
            _rows(range(2990, 3010), "merged"), "t.id = s.id", source_alias="s", target_alias="t"
        )
        .when_matched_update_all()
        .when_not_matched_insert_all()
        .execute()
    )
    _check(spark, left, right, ["id"])
    _check(spark, left, right, None)


def test_schema_evolution_where_and_columns(
    spark: SparkSession, base: Path, tmp_path: Path
) -> None:
    right = branch(base, tmp_path / "evolved")
    extra = _rows(range(7000, 7005), "x").append_column("score", pa.array([1, 2, 3, 4, 5]))
    write_deltalake(str(right), extra, mode="append", schema_mode="merge", partition_by=["region"])
    DeltaTable(str(right)).update(predicate="id < 100", updates={"amount": "0.0"})
    diff = _check(spark, base, right, ["id"])
    assert diff.summary.columns_only_right == ("score",)
    narrowed = _check(spark, base, right, ["id"], columns=["amount"], where="id < 50")
    assert narrowed.summary.compared_columns == ("id", "amount")
    assert narrowed.summary.updated == 49  # ids 1-49 (id 0 already had 0.0)


def test_whole_rows_are_multisets_with_nested_values(spark: SparkSession, tmp_path: Path) -> None:
    left = tmp_path / "dups"
    maps = pa.map_(pa.string(), pa.int32())
    nested = pa.struct([("x", pa.float64()), ("tags", pa.list_(pa.string()))])

    def table(a: list[Any], m: list[Any], s: list[Any], f: list[Any]) -> pa.Table:
        return pa.table(
            {
                "a": pa.array(a, pa.int64()),
                "m": pa.array(m, maps),
                "s": pa.array(s, nested),
                "f": pa.array(f, pa.float64()),
            }
        )

    nan = float("nan")
    s1, s2 = {"x": 1.0, "tags": ["p"]}, {"x": 2.0, "tags": []}
    write_deltalake(
        str(left),
        table([1, 1, 2, None], [[("k", 1)], [("k", 1)], None, []], [s1, s1, s2, None], [nan] * 4),
    )
    right = branch(left, tmp_path / "dups2")
    write_deltalake(
        str(right),
        table([1, 2, 2, None], [[("k", 1)], None, None, [("j", 2)]], [s1, s2, s2, None], [nan] * 4),
        mode="overwrite",
    )
    diff = _check(spark, left, right, None)
    assert (diff.summary.deleted, diff.summary.inserted) == (2, 2)
    keyed = tmp_path / "keyed"
    write_deltalake(str(keyed), table([1, 2, 3], [[("k", 1)], None, []], [s1, s2, None], [nan] * 3))
    changed = branch(keyed, tmp_path / "keyed2")
    write_deltalake(
        str(changed),
        table([1, 2, 3], [[("k", 2)], None, []], [s1, s2, s1], [nan, nan, 1.0]),
        mode="overwrite",
    )
    by_key = _check(spark, keyed, changed, ["a"])
    assert [c.changed for c in by_key.page()] == [["m"], ["s", "f"]]


@pytest.mark.parametrize(
    ("name", "versions", "deleted"),
    [
        ("golden__dv-with-columnmapping", (3, 15), 12),
        ("kdefaults__basic-dv-with-checkpoint", (7, 46), 39),
    ],
)
def test_corpus_tables_with_deletion_vectors_and_column_mapping(
    spark: SparkSession, name: str, versions: tuple[int, int], deleted: int
) -> None:
    """Rows checked against deltalake's SQL read of both versions (see ``rowcheck``)."""
    path = corpus_table(name).path
    diff = _check(spark, path, path, None, left_version=versions[0], right_version=versions[1])
    assert (diff.summary.inserted, diff.summary.deleted) == (0, deleted)


def test_a_repeated_key_is_refused(spark: SparkSession, tmp_path: Path) -> None:
    left = tmp_path / "k"
    write_deltalake(str(left), pa.table({"id": [1, 2], "v": ["a", "b"]}))
    right = branch(left, tmp_path / "k2")
    write_deltalake(str(right), pa.table({"id": [3, 3], "v": ["c", "d"]}), mode="append")
    with pytest.raises(
        DiffError, match=r"the key id is not unique in the right table.*\{\"id\":3\}"
    ):
        diff_rows(str(left), str(right), key=["id"], engine="spark")
    with pytest.raises(DiffError, match="not unique"):
        deltaport.spark.diff_rows(spark, str(left), str(right), key=["id"])


def test_dataframes_of_the_public_api(spark: SparkSession, base: Path, tmp_path: Path) -> None:
    right = branch(base, tmp_path / "api")
    DeltaTable(str(right)).update(predicate="id < 5", updates={"note": "'x'"})
    DeltaTable(str(right)).delete("id >= 2990")
    write_deltalake(
        str(right), _rows(range(9000, 9003), "n"), mode="append", partition_by=["region"]
    )
    diff = deltaport.spark.diff_rows(spark, str(base), str(right), key=["id"])
    counts = diff.summary
    assert (counts.inserted, counts.deleted, counts.updated) == (3, 10, 5)
    assert counts.engine == "spark" and counts.base_version == 5
    assert diff.inserted.count() == 3 and diff.deleted.count() == 10
    updated = diff.updated.orderBy("key.id").collect()
    assert [r["key"]["id"] for r in updated] == [0, 1, 2, 3, 4]
    assert all(r["changed"] == ["note"] and r["right"]["note"] == "x" for r in updated)
    out = tmp_path / "changes"
    diff.changes.write.parquet(str(out))
    assert pq.read_table(out).num_rows == 18
    whole = deltaport.spark.diff_rows(spark, str(base), str(right), where="id < 5")
    assert (whole.summary.inserted, whole.summary.deleted) == (5, 5)


def test_cli_engine_spark(spark: SparkSession, base: Path, tmp_path: Path, capsys: Any) -> None:
    right = branch(base, tmp_path / "cli")
    DeltaTable(str(right)).update(predicate="id < 5", updates={"note": "'x'"})
    args = [str(base), str(right), "--rows", "--key", "id", "--json", "--limit", "3"]
    assert cli_main([*args, "--engine", "spark"]) == 0
    on_spark = capsys.readouterr().out.splitlines()
    assert cli_main(args) == 0
    on_arrow = capsys.readouterr().out.splitlines()
    summary = json.loads(on_spark[0])
    assert (summary["updated"], summary["engine"]) == (5, "spark")
    assert on_spark[1:] == on_arrow[1:]
