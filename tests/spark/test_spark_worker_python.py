"""A job run as ``.venv/bin/python job.py`` without the environment activated: ``python3``
on the PATH is a Python without deltaport (here: a shim to the system's interpreter).
``register`` points Spark's workers at the driver's Python when none is configured, and
names a configured one that lacks deltaport in one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from corpus import corpus_table

SYSTEM_PYTHON = "/usr/bin/python3"
TABLE = "dat__all_primitive_types"

JOB = """
import sys
from pyspark.sql import SparkSession

spark = (
    SparkSession.builder.master("local[1]")
    .config("spark.ui.enabled", "false")
    .config("spark.sql.session.timeZone", "UTC")
    .getOrCreate()
)
import deltaport.spark

deltaport.spark.register(spark)
if sys.argv[2] == "read":
    print("rows", spark.read.format("deltaSharing").load(sys.argv[1]).count())
spark.stop()
"""


def _system_python_lacks_deltaport() -> bool:
    if not os.path.exists(SYSTEM_PYTHON):
        return False
    found = subprocess.run([SYSTEM_PYTHON, "-c", "import deltaport"], capture_output=True)
    return found.returncode != 0


pytestmark = pytest.mark.skipif(
    not _system_python_lacks_deltaport(), reason=f"needs {SYSTEM_PYTHON} without deltaport"
)


def _job_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment of a shell where the virtual environment is not activated:
    ``python3`` is the system's, and no PYSPARK_PYTHON is set."""
    shims = tmp_path / "shims"
    shims.mkdir(exist_ok=True)
    if not (shims / "python3").exists():
        (shims / "python3").symlink_to(SYSTEM_PYTHON)
    venv_bin = str(Path(sys.executable).parent)
    path = [p for p in os.environ["PATH"].split(os.pathsep) if p != venv_bin]
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "VIRTUAL_ENV")}
    return {**env, "PATH": os.pathsep.join([str(shims), *path]), **extra}


def _run_job(tmp_path: Path, url: str, action: str, env: dict[str, str]) -> Any:
    job = tmp_path / "job.py"
    job.write_text(JOB)
    return subprocess.run(
        [sys.executable, str(job), url, action],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_workers_run_the_drivers_python_when_none_is_configured(
    server: Any, profile: str, tmp_path: Path
) -> None:
    url = f"{profile}#s.d.{TABLE}"
    done = _run_job(tmp_path, url, "read", _job_env(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"rows {corpus_table(TABLE).deltalake_rows}" in done.stdout.splitlines()


def test_a_configured_worker_python_without_deltaport_is_named_in_one_line(
    server: Any, profile: str, tmp_path: Path
) -> None:
    shim = str(tmp_path / "shims" / "python3")
    env = _job_env(tmp_path, PYSPARK_PYTHON=shim)
    done = _run_job(tmp_path, f"{profile}#s.d.{TABLE}", "register", env)
    hints = [line for line in done.stderr.splitlines() if "Spark's Python workers run" in line]
    assert len(hints) == 1, done.stderr[-3000:]
    assert shim in hints[0]
    assert f"PYSPARK_PYTHON={sys.executable}" in hints[0]
    assert "DATA_SOURCE_NOT_FOUND" in hints[0]
