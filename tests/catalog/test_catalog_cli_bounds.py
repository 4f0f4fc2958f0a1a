"""The catalog commands on a real SQLite catalog: durations and versions out of their
documented bounds are refused before anything is written (no recipient, no token, no
profile), and listing never fails on a value stored before the bounds existed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from deltaport.catalog.sql_store import SqlCatalog
from deltaport.cli import main as cli


@pytest.fixture
def url(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path}/catalog.db"
    SqlCatalog(url)  # created and migrated
    return url


@pytest.mark.parametrize(
    ("expires", "message"),
    [
        ("3000000d", "'3000000d' is longer than 100 years"),
        ("5300w", "'5300w' is longer than 100 years"),
        ("0s", "the token lifetime must be between 1 and 3153600000 seconds"),
        ("99999999999999999999d", "not a duration: '99999999999999999999d'"),
        ("soon", "not a duration: 'soon'"),
    ],
)
def test_recipient_create_refuses_a_lifetime_out_of_bounds_and_writes_nothing(  # type: ignore[no-untyped-def]
    url: str, tmp_path: Path, capsys, expires: str, message: str
) -> None:
    profile = tmp_path / "x.share"
    args = ["recipient", "create", "x", "--expires", expires, "-o", str(profile), "--catalog", url]
    assert cli(args) == 1
    err = capsys.readouterr().err
    assert err.startswith("deltaport: error: ") and message in err
    assert "Traceback" not in err
    assert not profile.exists()
    assert SqlCatalog(url).contents().recipients == {}
    # the name is free: nothing was written
    assert cli([*args[:3], "--expires", "90d", "-o", str(profile), "--catalog", url]) == 0
    assert profile.exists()


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--grace", "3000000d"], "is longer than 100 years"),
        (["--grace", "1h", "--expires", "0m"], "the token lifetime must be between"),
        (["--grace", "1h", "--expires", "40000d"], "is longer than 100 years"),
    ],
)
def test_recipient_rotate_refuses_durations_out_of_bounds(  # type: ignore[no-untyped-def]
    url: str, capsys, option: list[str], message: str
) -> None:
    assert cli(["recipient", "create", "y", "--catalog", url]) == 0
    before = SqlCatalog(url).contents()
    capsys.readouterr()
    assert cli(["recipient", "rotate", "y", *option, "--catalog", url]) == 1
    err = capsys.readouterr().err
    assert err.startswith("deltaport: error: ") and message in err
    after = SqlCatalog(url).contents()
    assert (after.generation, after.tokens) == (before.generation, before.tokens)


@pytest.mark.parametrize("version", [str(2**63), str(10**20), "-1"])
def test_table_add_refuses_a_start_version_out_of_bounds(  # type: ignore[no-untyped-def]
    url: str, tmp_path: Path, capsys, version: str
) -> None:
    table = tmp_path / "t"
    write_deltalake(str(table), pa.table({"id": [1]}))
    assert cli(["share", "create", "s", "--catalog", url]) == 0
    capsys.readouterr()
    args = ["table", "add", "s.d.t", str(table), "--history", f"--start-version={version}"]
    assert cli([*args, "--catalog", url]) == 1
    err = capsys.readouterr().err
    assert f"startVersion must be between 0 and {2**63 - 1}" in err
    assert SqlCatalog(url).contents().tables == ()


def test_recipient_list_shows_any_stored_expiry(url: str, capsys) -> None:  # type: ignore[no-untyped-def]
    assert cli(["recipient", "create", "old", "--catalog", url]) == 0
    # what an unbounded rotation stored before lifetimes were checked: past the year 9999
    path = url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as db:
        db.execute("UPDATE tokens SET expires_at = ?", (10**12 * 1000,))
    capsys.readouterr()
    assert cli(["recipient", "list", "--catalog", url]) == 0
    out = capsys.readouterr().out
    assert f"old: no shares; 1 token, expires {10**15} ms after 1970-01-01 UTC" in out
