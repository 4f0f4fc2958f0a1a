"""A clone without the corpus: the suite collects and runs green, the tests that need the corpus
are skipped with one reason, and the run ends by saying how many and how to point at one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOWHERE = "/nonexistent/delta-corpus"


def _pytest(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DELTAPORT_CORPUS": NOWHERE}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _tail(out: str) -> str:
    return "\n".join(out.splitlines()[-4:])


def test_the_whole_suite_collects_without_the_corpus() -> None:
    run = _pytest("--collect-only", "-q")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "error" not in run.stdout.splitlines()[-1]
    tail = _tail(run.stdout)
    assert f"test modules skipped: needs the Delta corpus: no {NOWHERE}/MANIFEST.tsv." in tail
    assert "DELTAPORT_CORPUS=/path/to/delta-corpus" in tail


def test_corpus_tests_are_skipped_with_one_reason() -> None:
    # test_cli.py reads the corpus at import (a module skip), test_cdf.py in its fixtures
    run = _pytest("-q", "-rs", "tests/test_cli.py", "tests/server/test_cdf.py")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    skips = [line for line in run.stdout.splitlines() if line.startswith("SKIPPED [")]
    assert skips
    assert all(f"needs the Delta corpus: no {NOWHERE}/MANIFEST.tsv" in s for s in skips), skips
    tail = _tail(run.stdout)
    assert "39 tests and 1 test module skipped: needs the Delta corpus" in tail, tail
    assert "DELTAPORT_CORPUS=" in tail
    assert run.stdout.splitlines()[-1].startswith("40 skipped")
