"""The recipient CLI actions (the functions ``deltaport shares/tables/cat/download`` call)."""

from __future__ import annotations

import io

import pyarrow.parquet as pq
from compare import assert_same_rows, direct_read

from deltaport.cli import profile_reads as cli_commands
from deltaport.client.files.progress import ProgressLine


def test_shares(profile):
    assert cli_commands.shares(profile) == "share1\nshare2"


def test_tables(profile):
    assert cli_commands.tables(profile, "share1").splitlines()[:2] == [
        "share1.default.parted",
        "share1.default.small_files",
    ]
    assert cli_commands.tables(profile, "share2") == ""
    assert "share1.other.again" in cli_commands.tables(profile)


def test_cat(profile):
    text = cli_commands.cat(f"{profile}#share1.default.parted", limit=2, version=0)
    lines = text.splitlines()
    assert lines[0].split() == ["id", "region", "value"]
    assert len(lines) == 3 and all("eu" in line for line in lines[1:])


def test_download(profile, client_tables, tmp_path, capsys):
    out = tmp_path / "out.parquet"
    rows = cli_commands.download(f"{profile}#share1.default.small_files", out, progress=True)
    assert rows == 2000
    assert_same_rows(pq.read_table(out), direct_read(client_tables["small_files"]))
    err = capsys.readouterr().err
    assert "40/40 files" in err and err.endswith("\n")


def test_progress_line_draws_totals():
    from deltaport.client.base.models import RemoteFile

    stream = io.StringIO()
    line = ProgressLine(2, 3 * 1024 * 1024, stream)
    line.file_done(RemoteFile("a", "u", 1024 * 1024), 10)
    line.file_done(RemoteFile("b", "u", 2 * 1024 * 1024), 5)
    line.close()
    assert "2/2 files  3.0/3.0 MB  100.0%  15 rows" in stream.getvalue()
