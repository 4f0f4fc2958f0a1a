"""The install the README leads with: a wheel built with ``uv build``, installed into a clean
virtual environment with the locked dependencies (from uv's cache, offline), works on its
own: the CLI runs and the console serves its pages, templates and static files from the
installed package, not from this checkout."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import yaml

from deltaport import __version__
from sharing_server import free_port, table_entry, write_partitioned_table
from waiting import wait_until

ROOT = Path(__file__).resolve().parents[1]
EXTRAS = {"spark", "polars", "postgres", "credentials"}


@dataclass(frozen=True)
class Installed:
    venv: Path

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    def run(self, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.venv / "bin" / args[0]), *args[1:]],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=cwd,
            env=_clean_env(),
        )


def _clean_env() -> dict[str, str]:
    """The environment without this checkout's virtual environment or import paths."""
    drop = {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "UV_PROJECT_ENVIRONMENT"}
    return {k: v for k, v in os.environ.items() if k not in drop}


def _uv(*args: str, env: dict[str, str] | None = None) -> str:
    uv = shutil.which("uv")
    assert uv, "uv is needed to build and install the wheel (scripts/test.sh installs it)"
    done = subprocess.run(
        [uv, *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env={**_clean_env(), **(env or {})},
    )
    assert done.returncode == 0, f"uv {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """The locked dependencies with every extra (``uv sync`` into a new environment: no
    network, the wheels come from uv's cache), then the wheel on top."""
    tmp = tmp_path_factory.mktemp("install")
    _uv("build", "--wheel", "--offline", "--out-dir", str(tmp / "dist"))
    (wheel,) = (tmp / "dist").glob("deltaport-*.whl")
    venv = tmp / "venv"
    _uv(
        "sync",
        "--frozen",
        "--no-dev",
        "--all-extras",
        "--no-install-project",
        "--offline",
        "--python",
        sys.executable,
        env={"UV_PROJECT_ENVIRONMENT": str(venv)},
    )
    python = str(venv / "bin" / "python")
    _uv("pip", "install", "--offline", "--no-deps", "--python", python, str(wheel))
    return Installed(venv)


def test_the_cli_runs_from_the_installed_package(installed: Installed, tmp_path: Path) -> None:
    where = installed.run(
        "python",
        "-c",
        "import deltaport, pyspark_deltaport, polars; print(deltaport.__file__)",
        cwd=tmp_path,
    )
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(installed.venv)
    version = installed.run("deltaport", "--version", cwd=tmp_path)
    assert (version.returncode, version.stdout.strip()) == (0, f"deltaport {__version__}")
    demo = installed.run("deltaport", "demo", "--help", cwd=tmp_path)
    assert demo.returncode == 0, demo.stderr
    assert "--dir" in demo.stdout and "--port" in demo.stdout
    extras = installed.run(
        "python",
        "-c",
        "from importlib.metadata import metadata; "
        "print('\\n'.join(metadata('deltaport').get_all('Provides-Extra')))",
        cwd=tmp_path,
    )
    assert set(extras.stdout.split()) >= EXTRAS


@pytest.fixture
def served(installed: Installed, tmp_path: Path) -> Iterator[str]:
    """The installed ``deltaport serve`` with its admin listener; the admin base URL."""
    table = write_partitioned_table(tmp_path / "orders")
    admin_port = free_port()
    config = {
        "version": 1,
        "authorization": {"bearerToken": "install-test-token-0f3a"},
        "signingKey": "install-test-signing-key",
        "admin": {"port": admin_port, "tokens": ["install-test-admin-token"]},
        "shares": [
            {"name": "lake", "schemas": [{"name": "main", "tables": [table_entry("t", table)]}]}
        ],
    }
    (tmp_path / "server.yaml").write_text(yaml.safe_dump(config))
    log = (tmp_path / "server.log").open("wb")
    process = subprocess.Popen(
        [
            *(str(installed.venv / "bin" / "deltaport"), "serve", "--config", "server.yaml"),
            *("--host", "127.0.0.1", "--port", str(free_port())),
        ],
        cwd=tmp_path,
        env=_clean_env(),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    admin = f"http://127.0.0.1:{admin_port}"
    try:

        def started() -> httpx.Response:
            assert process.poll() is None, (tmp_path / "server.log").read_text()
            return httpx.get(admin + "/api/openapi.json", timeout=1)

        wait_until(started, 60, "the admin listener", 0.2, ignore=(httpx.HTTPError,))
        yield admin
    finally:
        process.terminate()
        process.wait(30)
        log.close()


def test_the_installed_console_serves_its_pages_and_files(served: str) -> None:
    login = httpx.get(served + "/console/login")
    assert login.status_code == 200
    assert 'name="token"' in login.text
    static = ROOT / "src" / "deltaport" / "console" / "static"
    for name in ("console.css", "htmx.min.js", "favicon.svg"):
        answer = httpx.get(f"{served}/console/static/{name}")
        assert answer.status_code == 200, name
        assert answer.content == (static / name).read_bytes()
