"""The ``deltaport diff`` command function, the JSON shape and the text rendering."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deltaport.cli.diff import cli_main
from deltaport.diff import diff_tables, render_text, to_json
from difftables import branch, write


@pytest.fixture
def branches(tmp_path: Path) -> tuple[Path, Path]:
    main = tmp_path / "main"
    write(main, {"id": [1, 2, 3]})
    exp = branch(main, tmp_path / "exp")
    write(exp, {"id": [4], "extra": ["x"]}, schema_mode="merge")
    write(exp, {"id": [5], "extra": ["y"]})
    return main, exp


def test_json_is_shaped_like_the_lakefs_response(branches: tuple[Path, Path]) -> None:
    main, exp = branches
    doc = to_json(diff_tables(str(main), str(exp)))
    json.dumps(doc)  # serialisable as is
    assert doc["table_diff_type"] == "changed"
    assert doc["base_version"] == 0
    first = doc["results"][0]
    assert set(first) == {"id", "timestamp", "operation", "operation_type", "operation_content"}
    assert first["id"] == "2"
    assert first["operation_type"] == "update"
    assert first["operation_content"]["operation_parameters"]["mode"] == "Append"
    assert doc["right"]["version"] == 2
    summary = doc["right"]["summary"]
    assert summary["rows_added"] == 2 and summary["net_rows"] == 2
    assert summary["schema_changes"] == [
        {"kind": "added", "column": "extra", "before": None, "after": "string"}
    ]
    assert doc["left"]["summary"]["commits"] == 0
    assert doc["next_page_token"] is None
    assert doc["metrics"]["log_entries_read"] == 4


def test_text_rendering(branches: tuple[Path, Path]) -> None:
    main, exp = branches
    text = render_text(diff_tables(str(main), str(exp), limit=1))
    assert ": changed" in text
    assert "base version 0" in text
    assert "right only: 2 commits (versions 1..2)" in text
    assert "rows +2 -0 (net +2)" in text
    assert "column added: extra string" in text
    assert "v2 " in text and "WRITE [update]" in text
    assert "v1 " not in text
    assert "--page-token " in text


def test_cli_text_and_json(branches: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    main, exp = branches
    assert cli_main([str(main), str(exp)]) == 0
    assert "WRITE [update]" in capsys.readouterr().out
    assert cli_main([str(main), str(exp), "--json", "--limit", "1"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in doc["results"]] == ["2"]
    token = doc["next_page_token"]
    assert cli_main([str(main), str(exp), "--json", "--page-token", token]) == 0
    assert [r["id"] for r in json.loads(capsys.readouterr().out)["results"]] == ["1"]
    assert cli_main([str(main), str(exp), "--json", "--base-version", "0"]) == 0
    assert json.loads(capsys.readouterr().out)["base_version"] == 0


def test_cli_errors(
    branches: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main, exp = branches
    assert cli_main([str(main), str(exp), "--page-token", "bogus"]) == 1
    assert "page token" in capsys.readouterr().err
    assert cli_main([str(tmp_path / "x"), str(tmp_path / "y")]) == 1
    assert "no registered differ" in capsys.readouterr().err
    assert cli_main([str(main), str(exp), "--base-version", "9"]) == 1
    assert "base version 9" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        cli_main([str(main), str(exp), "--option", "novalue"])
    assert exit_info.value.code == 2
