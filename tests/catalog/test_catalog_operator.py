"""Operator faults around the catalog database: relative locations, an import that fails
half-way, a file that cannot be opened, is missing or goes away, file permissions, and the
admin token read from a file."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx
import pyarrow as pa
import pytest
import yaml
from deltalake import write_deltalake

from deltaport.catalog.database.connection import CatalogMissingError
from deltaport.catalog.rows import CatalogError, TableSpec
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.cli import main as cli
from deltaport.config.loading import load_config
from deltaport.config.model import ConfigError
from sharing_server import free_port
from unprivileged import NOBODY, as_nobody
from waiting import wait_until


@pytest.fixture
def table(tmp_path: Path) -> Path:
    path = tmp_path / "t"
    write_deltalake(str(path), pa.table({"id": [1, 2, 3]}))
    return path


def _yaml(path: Path, shares: list[dict[str, object]], **extra: object) -> Path:
    path.write_text(yaml.safe_dump({"version": 1, "shares": shares, **extra}))
    return path


def _share(name: str, location: str) -> dict[str, object]:
    return {
        "name": name,
        "schemas": [{"name": "s", "tables": [{"name": "t", "location": location}]}],
    }


def test_relative_locations_are_refused_by_the_server_and_the_catalog(
    tmp_path: Path, table: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"tables\[0\]\.location: 't' is a relative path"):
        load_config(_yaml(tmp_path / "c.yaml", [_share("a", "t")]))
    store = SqlCatalog(f"sqlite:///{tmp_path}/c.db")
    store.create_share("a")
    with pytest.raises(CatalogError, match="relative path"):
        store.add_table("a", "s", "t", TableSpec("./t"))
    # the command a person types resolves it against its own directory, and says where
    url = f"sqlite:///{tmp_path}/c.db"
    assert cli(["table", "add", "a.s.t", "t", "--catalog", url]) == 0
    assert [r.location for r in store.contents().tables] == [str(table)]


def test_an_import_that_fails_half_way_leaves_nothing(
    tmp_path: Path, table: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path}/c.db"
    SqlCatalog(url).create_share("second")
    config = _yaml(
        tmp_path / "c.yaml",
        [_share("first", str(table)), _share("second", str(table))],
        authorization={"bearerToken": "an-imported-token-0123"},
    )
    assert cli(["catalog", "import", str(config), "--catalog", url]) == 1
    assert "deltaport: error: share 'second' exists already" in capsys.readouterr().err
    contents = SqlCatalog(url).contents()
    assert [s.name for s in contents.shares] == ["second"]
    assert contents.tables == () and contents.recipients == {}
    SqlCatalog(url).drop_share("second")
    assert cli(["catalog", "import", str(config), "--catalog", url]) == 0  # a rerun works
    assert [s.name for s in SqlCatalog(url).contents().shares] == ["first", "second"]


def test_a_catalog_file_that_cannot_be_opened_is_one_error_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is no database" * 100)
    deltaport = str(Path(sys.executable).parent / "deltaport")
    done = subprocess.run(
        [deltaport, "share", "list", "--catalog", f"sqlite:///{bad}"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("deltaport: error: the catalog database")
    assert "Traceback" not in done.stderr


def test_a_read_only_catalog_file_is_one_error_line() -> None:
    """As a user who owns the files but may not write them (``nobody`` when run as root:
    root writes to read-only files), in a directory of its own that user can reach
    (pytest's are private to root)."""
    with tempfile.TemporaryDirectory() as name:
        directory = Path(name) / "ro"
        url = f"sqlite:///{directory}/c.db"
        SqlCatalog(url).create_share("a")
        if os.geteuid() == 0:
            for path in (Path(name), directory, *directory.iterdir()):
                os.chown(path, NOBODY, NOBODY)
        for path in directory.iterdir():
            path.chmod(0o400)
        directory.chmod(0o500)
        status, stderr = as_nobody(lambda: cli(["share", "create", "b", "--catalog", url]))
        directory.chmod(0o700)
        assert status == 1, stderr
        assert stderr.startswith("deltaport: error:"), stderr
        assert "Traceback" not in stderr
        assert [s.name for s in SqlCatalog(url).contents().shares] == ["a"]


def test_a_server_refuses_a_missing_catalog_and_init_creates_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path}/data/catalog.db"
    assert cli(["serve", "--catalog", url, "--port", "0"]) == 1
    error = capsys.readouterr().err
    assert error.startswith(f"deltaport: error: there is no catalog database at {tmp_path}")
    assert "deltaport catalog init" in error
    assert not (tmp_path / "data" / "catalog.db").exists()
    assert cli(["share", "create", "s", "--catalog", url]) == 1  # nor do the commands
    assert "there is no catalog database" in capsys.readouterr().err
    assert not (tmp_path / "data" / "catalog.db").exists()
    assert cli(["catalog", "init", "--catalog", url]) == 0
    assert "created the catalog database" in capsys.readouterr().out
    assert cli(["catalog", "init", "--catalog", url]) == 1  # never over an existing one
    assert "exists already" in capsys.readouterr().err


def test_a_catalog_deleted_while_in_use_refuses_writes(tmp_path: Path) -> None:
    path = tmp_path / "catalog.db"
    store = SqlCatalog(f"sqlite:///{path}")
    store.create_share("kept")
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    with pytest.raises(CatalogMissingError, match="deleted or replaced while in use"):
        store.create_share("lost")
    with pytest.raises(CatalogMissingError):
        store.generation()


def test_the_catalog_files_are_private(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        path = tmp_path / "new" / "catalog.db"
        store = SqlCatalog(f"sqlite:///{path}")
        store.create_share("a")
        files = [path, Path(f"{path}-wal"), Path(f"{path}-shm")]
        assert {f.name: stat.S_IMODE(f.stat().st_mode) for f in files} == {
            f.name: 0o600 for f in files
        }
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    finally:
        os.umask(old)


def test_the_first_plain_start_creates_the_default_catalog(tmp_path: Path) -> None:
    """``deltaport serve`` without --config or --catalog: the explicit first start, the only
    one that creates a catalog (the embedded default, private)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "DELTAPORT_CATALOG"}
    deltaport = str(Path(sys.executable).parent / "deltaport")
    log = (tmp_path / "serve.log").open("wb")
    process = subprocess.Popen(
        [deltaport, "serve", "--host", "127.0.0.1", "--port", str(port)],
        cwd=tmp_path,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:

        def answered() -> httpx.Response:
            assert process.poll() is None, (tmp_path / "serve.log").read_text()
            return httpx.get(f"http://127.0.0.1:{port}/delta-sharing/shares", timeout=1)

        response = wait_until(answered, 60, "the server", ignore=(httpx.HTTPError,))
        assert response.status_code == 401  # served from the new, empty catalog
    finally:
        process.terminate()
        process.wait(30)
    created = tmp_path / "deltaport-data" / "catalog.db"
    assert stat.S_IMODE(created.stat().st_mode) == 0o600
