"""The dependency ranges pyproject.toml declares are true: deltaport installed with the
lowest version of each direct dependency (``uv pip install --resolution lowest-direct``), and
beside the official client (whose pins, ``pyarrow<=23.0.1`` among them, pick versions the
lock does not), passes a smoke suite (``tests/dependency_smoke.py``): logs replayed by the
CLI, corpus tables served and read back, compared with the corpus's expected results."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.version import Version

from corpus import CORPUS_ROOT
from emulators import OFFICIAL_CLIENT

ROOT = Path(__file__).resolve().parents[1]
SMOKE = Path(__file__).with_name("dependency_smoke.py")


def _floors() -> dict[str, str]:
    """Each runtime dependency's declared lowest version, by distribution name."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    floors = {}
    for requirement in project["dependencies"]:
        found = re.fullmatch(r"([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?>=([0-9.]+)", requirement)
        assert found, f"{requirement}: a runtime dependency is declared as name>=floor"
        floors[found[1].lower()] = found[2]
    return floors


def _venv(where: Path, *install: str) -> Path:
    uv = shutil.which("uv")
    assert uv, "uv is needed to build the environments (scripts/test.sh installs it)"
    python = where / "bin" / "python"
    for step in (
        [uv, "venv", "--quiet", str(where), "--python", sys.executable],
        [uv, "pip", "install", "--quiet", "--python", str(python), *install],
    ):
        done = subprocess.run(step, capture_output=True, text=True, timeout=900, cwd=ROOT)
        assert done.returncode == 0, f"{' '.join(step)}:\n{done.stdout}\n{done.stderr}"
    return python


def _installed(python: Path, names: list[str]) -> dict[str, str]:
    script = (
        "import json, sys; from importlib.metadata import version; "
        "print(json.dumps({n: version(n) for n in sys.argv[1:]}))"
    )
    done = subprocess.run(
        [str(python), "-c", script, *names], capture_output=True, text=True, check=True
    )
    return dict(json.loads(done.stdout))


def _smoke(python: Path, workdir: Path) -> str:
    done = subprocess.run(
        [str(python), str(SMOKE), str(CORPUS_ROOT), str(workdir)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=workdir,
    )
    assert done.returncode == 0, f"smoke suite, exit {done.returncode}:\n{done.stdout}{done.stderr}"
    return done.stdout


def test_the_lowest_declared_versions_work(tmp_path: Path) -> None:
    python = _venv(tmp_path / "venv", "--resolution", "lowest-direct", str(ROOT))
    floors = _floors()
    installed = _installed(python, sorted(floors))
    lowest = {name: Version(installed[name]) for name in floors}
    assert lowest == {name: Version(floor) for name, floor in floors.items()}
    assert "pyarrow 16.0.0" in _smoke(python, tmp_path)


def test_the_official_clients_pins_work(tmp_path: Path) -> None:
    """The versions an environment with both resolves to (pyarrow 23.0.1, whose
    ``indices_nonzero`` crashed the process on an empty chunked array)."""
    python = _venv(tmp_path / "venv", str(ROOT), OFFICIAL_CLIENT)
    assert _installed(python, ["pyarrow"]) == {"pyarrow": "23.0.1"}
    assert "pyarrow 23.0.1" in _smoke(python, tmp_path)
