"""Differs registered through the ``deltaport.differs`` entry-point group."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from deltaport.diff import (
    DiffError,
    TableDiffType,
    UnknownTableFormatError,
    detect_differ,
    diff_tables,
    get_differ,
    registered_formats,
)
from deltaport.diff.history.delta_differ import DeltaDiffer
from difftables import write

PLUGIN = '''
from deltaport.diff.base.model import DiffMetrics, TableDiff, TableDiffType


class MarkerDiffer:
    """Recognises directories holding a MARKER file; reports them as unchanged."""

    format_name = "marker"

    def detect(self, location, storage_options=None):
        import os
        return os.path.exists(os.path.join(location, "MARKER"))

    def diff(self, left_uri, right_uri, *, base_version=None, limit=1000,
             page_token=None, storage_options=None):
        return TableDiff(TableDiffType.NONE, "marker", left_uri, right_uri, None, None,
                         None, (), None, None, (), None, DiffMetrics(0, 0.0))
'''


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An installed distribution that registers the ``marker`` and ``broken`` differs."""
    site = tmp_path / "site"
    (site / "marker_plugin.py").parent.mkdir(parents=True)
    (site / "marker_plugin.py").write_text(PLUGIN)
    dist = site / "marker_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: marker-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        textwrap.dedent(
            """\
            [deltaport.differs]
            marker = marker_plugin:MarkerDiffer
            broken = marker_plugin:DoesNotExist
            """
        )
    )
    monkeypatch.syspath_prepend(str(site))
    yield site
    sys.modules.pop("marker_plugin", None)


def test_delta_is_built_in_and_first() -> None:
    formats = registered_formats()
    assert next(iter(formats)) == "delta"
    assert isinstance(get_differ("DELTA"), DeltaDiffer)


def test_plugins_are_found_by_entry_point(plugin: Path, tmp_path: Path) -> None:
    assert list(registered_formats())[:1] == ["delta"]
    assert {"marker", "broken"} <= set(registered_formats())
    left = tmp_path / "l"
    left.mkdir()
    (left / "MARKER").write_text("")
    differ = detect_differ(str(left), str(tmp_path / "r"))
    assert differ.format_name == "marker"
    result = diff_tables(str(left), str(tmp_path / "r"), table_format="marker")
    assert result.table_diff_type is TableDiffType.NONE
    with pytest.raises(DiffError, match="'broken' failed to load"):
        get_differ("broken")


def test_delta_is_detected_before_plugins(plugin: Path, tmp_path: Path) -> None:
    table = tmp_path / "t"
    write(table, {"id": [1]})
    (table / "MARKER").write_text("")
    assert isinstance(detect_differ(str(table), str(table)), DeltaDiffer)


def test_unknown_format(tmp_path: Path) -> None:
    with pytest.raises(UnknownTableFormatError, match="registered: delta"):
        get_differ("iceberg")
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "data.parquet").write_text("")
    with pytest.raises(UnknownTableFormatError, match="no registered differ recognises"):
        detect_differ(str(plain), str(plain))
