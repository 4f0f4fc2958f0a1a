"""Version ranges (changes) and the change-data-feed selection (change_data)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from urllib.parse import unquote

import deltalake
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from delta_log_writer import add, cdc, commit_info, metadata, protocol, remove, write_commit

from corpus import CorpusTable, corpus_table, corpus_tables
from deltaport.delta import CHANGE_SCHEMA, CdfNotEnabledError, DeltaTable, VersionNotFoundError

CDF_ON = {"delta.enableChangeDataFeed": "true"}

# CDF tables deltalake's load_cdf reads (no deletion vectors: with DVs the row-level
# change is computed by the read layer, so file-level counts differ by design).
LOAD_CDF_TABLES = [
    t
    for t in corpus_tables()
    if "cdf" in t.tags
    and t.deltalake_reads == "yes"
    and not t.negative
    and "special-chars" not in t.tags
    and "dv-enabled" not in t.tags
    and t.name != "krs__table-with-cdf"  # feed turned off at v2: we refuse, deltalake does not
]


def _earliest_commit(table: CorpusTable) -> int:
    return min(int(p.name[:20]) for p in (table.path / "_delta_log").glob("*.json"))


@pytest.mark.parametrize("table", LOAD_CDF_TABLES, ids=[t.name for t in LOAD_CDF_TABLES])
def test_change_data_rows_match_deltalake_load_cdf(table: CorpusTable) -> None:
    start = _earliest_commit(table)
    selected = DeltaTable(str(table.path)).change_data(start)
    ours: Counter[tuple[int, str]] = Counter()
    for row in selected.files.select(["version", "action", "path"]).to_pylist():
        data = pq.read_table(table.path / unquote(row["path"]))
        if row["action"] == "cdc":
            for kind, n in Counter(data.column("_change_type").to_pylist()).items():
                ours[(row["version"], kind)] += n
        else:
            ours[(row["version"], "insert" if row["action"] == "add" else "delete")] += (
                data.num_rows
            )
    peer = pa.table(deltalake.DeltaTable(table.path).load_cdf(starting_version=start).read_all())
    versions = peer.column("_commit_version").to_pylist()
    theirs = Counter(zip(versions, peer.column("_change_type").to_pylist(), strict=True))
    assert +ours == theirs


def test_changes_lists_every_file_action_in_log_order() -> None:
    table = corpus_table("drs__cdf-table")
    changes = DeltaTable(str(table.path)).changes(0)
    assert changes.files.schema == CHANGE_SCHEMA
    expected = []
    for v in range(changes.start_version, changes.end_version + 1):
        text = (table.path / "_delta_log" / f"{v:020d}.json").read_text()
        for line in text.splitlines():
            action = json.loads(line)
            for kind in ("add", "remove", "cdc"):
                if kind in action:
                    expected.append((v, kind, action[kind]["path"]))
    got = changes.files.select(["version", "action", "path"]).to_pylist()
    assert [(r["version"], r["action"], r["path"]) for r in got] == expected
    assert [e.version for e in changes.versions] == list(range(changes.end_version + 1))
    assert changes.versions[0].metadata is not None and changes.versions[0].protocol is not None


def _mixed_table(root: Path) -> None:
    write_commit(root, 0, [commit_info(), protocol(), metadata(**CDF_ON), add("a", 3)])
    write_commit(root, 1, [commit_info(), remove("a"), add("b", 2), cdc("c1"), cdc("c2")])
    write_commit(root, 2, [commit_info(), remove("b", data_change=False), add("o", 2, False)])
    write_commit(root, 3, [commit_info(), remove("o"), add("p", 1)])
    write_commit(root, 4, [commit_info(), metadata()])
    write_commit(root, 5, [commit_info(), add("q", 1)])


def test_change_data_selection_per_version(tmp_path: Path) -> None:
    _mixed_table(tmp_path)
    table = DeltaTable(str(tmp_path))
    selected = table.change_data(0, 3).files.select(["version", "action", "path"]).to_pylist()
    assert [(r["version"], r["action"], r["path"]) for r in selected] == [
        (0, "add", "a"),
        (1, "cdc", "c1"),
        (1, "cdc", "c2"),
        (3, "remove", "o"),
        (3, "add", "p"),
    ]
    assert len(table.changes(0, 3).files) == 9


def test_change_data_names_the_first_version_without_cdf(tmp_path: Path) -> None:
    _mixed_table(tmp_path)
    table = DeltaTable(str(tmp_path))
    with pytest.raises(CdfNotEnabledError, match="not enabled at version 4"):
        table.change_data(2)
    corpus = DeltaTable(str(corpus_table("krs__cdf-column-mapping-id-mode").path))
    with pytest.raises(CdfNotEnabledError, match="not enabled at version 0"):
        corpus.change_data(0)
    assert corpus.change_data(1).end_version == 4
    toggled = DeltaTable(str(corpus_table("krs__table-with-cdf").path))
    with pytest.raises(CdfNotEnabledError, match="not enabled at version 2"):
        toggled.change_data(0)
    assert toggled.change_data(3).start_version == 3


def test_changes_protocol_and_metadata_are_as_of_start(tmp_path: Path) -> None:
    _mixed_table(tmp_path)
    changes = DeltaTable(str(tmp_path)).changes(3)
    assert changes.metadata.change_data_feed_enabled
    assert changes.versions[1].metadata is not None
    assert not changes.versions[1].metadata.change_data_feed_enabled
    assert (changes.start_version, changes.end_version) == (3, 5)


def test_changes_before_log_cleanup_point_is_version_not_found() -> None:
    table = DeltaTable(str(corpus_table("drs__checkpoint-cdf-table").path))
    with pytest.raises(VersionNotFoundError, match="earliest commit is 3"):
        table.changes(0)
    assert table.change_data(3).start_version == 3
    with pytest.raises(VersionNotFoundError, match="not available"):
        table.changes(2, 99)
