"""Broken or unsupported tables fail with the right DeltaError and a one-line message."""

from __future__ import annotations

from pathlib import Path

import pytest
from delta_log_writer import add, commit_info, metadata, protocol, simple_table, write_commit

from deltaport.delta import (
    DeltaTable,
    LogCorruptError,
    TableNotFoundError,
    UnsupportedFeatureError,
    VersionNotFoundError,
)


def test_missing_and_empty_locations(tmp_path: Path) -> None:
    with pytest.raises(TableNotFoundError, match="_delta_log is missing or empty"):
        DeltaTable(str(tmp_path / "nowhere")).snapshot()
    (tmp_path / "_delta_log").mkdir()
    with pytest.raises(TableNotFoundError):
        DeltaTable(str(tmp_path)).latest_version()


def test_malformed_json_names_file_and_line(tmp_path: Path) -> None:
    simple_table(tmp_path, 2)
    path = tmp_path / "_delta_log" / f"{1:020d}.json"
    path.write_text(path.read_text() + '{"add": {"path": \n')
    with pytest.raises(LogCorruptError, match=r"malformed JSON in 0+1\.json line 3"):
        DeltaTable(str(tmp_path)).snapshot()


def test_wrongly_typed_action_is_corrupt_not_type_error(tmp_path: Path) -> None:
    write_commit(tmp_path, 0, [protocol(), metadata(), {"add": {"path": 7}}])
    with pytest.raises(LogCorruptError, match="malformed JSON"):
        DeltaTable(str(tmp_path)).snapshot()


def test_unknown_reader_feature_is_named(tmp_path: Path) -> None:
    write_commit(
        tmp_path,
        0,
        [
            protocol(3, 7, readerFeatures=["deletionVectors", "fancyNewThing"], writerFeatures=[]),
            metadata(),
            add("a"),
        ],
    )
    with pytest.raises(UnsupportedFeatureError, match=r"version 0 .*: fancyNewThing$"):
        DeltaTable(str(tmp_path)).snapshot()


def test_reader_version_above_three_is_refused(tmp_path: Path) -> None:
    write_commit(tmp_path, 0, [protocol(4, 7), metadata()])
    with pytest.raises(UnsupportedFeatureError, match="reader protocol version 4"):
        DeltaTable(str(tmp_path)).snapshot()


def test_protocol_upgrade_later_in_log_is_checked(tmp_path: Path) -> None:
    simple_table(tmp_path, 2)
    write_commit(tmp_path, 2, [commit_info(), protocol(3, 7, readerFeatures=["x"])])
    table = DeltaTable(str(tmp_path))
    assert table.snapshot(1).version == 1
    with pytest.raises(UnsupportedFeatureError, match=r"version 2 .*: x$"):
        table.snapshot()
    with pytest.raises(UnsupportedFeatureError):
        table.changes(0)


def test_version_errors_state_the_available_range(tmp_path: Path) -> None:
    simple_table(tmp_path, 3)
    table = DeltaTable(str(tmp_path))
    with pytest.raises(VersionNotFoundError, match=r"version 7 does not exist; .*0\.\.2"):
        table.snapshot(7)
    with pytest.raises(VersionNotFoundError, match=r"0\.\.2"):
        table.commit_timestamp(5)


def test_staged_commits_are_not_counted(tmp_path: Path) -> None:
    simple_table(tmp_path, 2)
    staged = tmp_path / "_delta_log" / "_staged_commits"
    staged.mkdir()
    (staged / f"{2:020d}.3a0d65cd-4056-49b8-937b-95f9e3ee90e5.json").write_text("{}\n")
    assert DeltaTable(str(tmp_path)).latest_version() == 1


def test_corpus_catalog_managed_table_reads_its_published_log() -> None:
    from corpus import corpus_table

    table = DeltaTable(str(corpus_table("kbench__basic_catalog_managed").path))
    snap = table.snapshot()
    assert snap.version == 1
    assert "catalogManaged" in (snap.protocol.reader_features or ())
