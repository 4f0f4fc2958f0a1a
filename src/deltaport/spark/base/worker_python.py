"""Which Python Spark's workers run, and whether deltaport is installed in it.

Spark starts its Python workers with ``spark.pyspark.python``, else ``PYSPARK_PYTHON``,
else ``python3`` from the PATH. A job started as ``.venv/bin/python job.py`` without the
environment activated gets a ``python3`` that lacks deltaport, and the read fails with
``DATA_SOURCE_NOT_FOUND`` under a page of Java. When nothing is configured, ``register``
points the workers at the driver's own interpreter; when a configured Python exists on
this machine and lacks deltaport, it says so in one line."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

DEFAULT_WORKER_PYTHON = "python3"
_FINDS_CONNECTOR = "import importlib.util, sys; sys.exit(not importlib.util.find_spec('deltaport'))"


def configured_worker_python(spark: SparkSession) -> str | None:
    """``spark.pyspark.python`` or ``PYSPARK_PYTHON``; None when neither is set."""
    conf = spark.sparkContext.getConf().get("spark.pyspark.python")
    return conf or os.environ.get("PYSPARK_PYTHON") or None


def lacks_deltaport(python: str) -> bool:
    """True when ``python`` runs on this machine and cannot import deltaport (a Python
    that is not here, such as a path on a cluster's executors, is not judged)."""
    executable = shutil.which(python)
    if executable is None:
        return False
    if os.path.realpath(executable) == os.path.realpath(sys.executable):
        return False
    try:
        found = subprocess.run([executable, "-c", _FINDS_CONNECTOR], timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return found.returncode != 0


def worker_python_hint(python: str, source: str) -> str:
    return (
        f"Spark's Python workers run {python} ({source}), where deltaport is not installed: "
        f"set PYSPARK_PYTHON={sys.executable} (this job's Python) or install deltaport[spark] "
        "there, or the deltaSharing source is not found (DATA_SOURCE_NOT_FOUND)"
    )


def use_driver_python(spark: SparkSession) -> None:
    """Point the workers of what is registered next at the driver's interpreter when no
    worker Python is configured and ``python3`` from the PATH lacks deltaport; warn in
    one line when a configured one lacks it. Not for Spark Connect (no SparkContext)."""
    if _is_connect(spark):
        return
    context = spark.sparkContext
    configured = configured_worker_python(spark)
    if configured is None and context.pythonExec == DEFAULT_WORKER_PYTHON:
        if lacks_deltaport(DEFAULT_WORKER_PYTHON):
            context.pythonExec = sys.executable
            log.info(
                "Spark's Python workers run %s: python3 on the PATH lacks deltaport", sys.executable
            )
        return
    python = configured or context.pythonExec
    if lacks_deltaport(python):
        source = "spark.pyspark.python or PYSPARK_PYTHON" if configured else "the session's"
        log.warning(worker_python_hint(python, source))


def _is_connect(spark: SparkSession) -> bool:
    return type(spark).__module__.startswith("pyspark.sql.connect")
