"""Test-wide setup: make tests/ importable (``from corpus import ...``), and say at the end of a
run how many tests were skipped for want of the corpus and how to point the suite at one."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import MISSING_REASON

pytest_plugins = ["emulators"]


def _skipped_for_corpus(report: pytest.CollectReport | pytest.TestReport) -> bool:
    longrepr = report.longrepr
    return isinstance(longrepr, tuple) and MISSING_REASON in str(longrepr[2])


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> Iterator[None]:
    """After pytest's own summary (its short summary lists every skip), so that it ends the run."""
    yield
    skipped = [r for r in terminalreporter.stats.get("skipped", []) if _skipped_for_corpus(r)]
    if not skipped:
        return
    modules = sum(1 for r in skipped if isinstance(r, pytest.CollectReport))
    counts = [(len(skipped) - modules, "test"), (modules, "test module")]
    what = " and ".join(f"{n} {noun}{'s' if n != 1 else ''}" for n, noun in counts if n)
    terminalreporter.section("Delta corpus missing", sep="=", yellow=True)
    terminalreporter.line(f"{what} skipped: {MISSING_REASON}.", yellow=True)
    terminalreporter.line(
        "Point the suite at a corpus with DELTAPORT_CORPUS=/path/to/delta-corpus "
        "(a folder holding MANIFEST.tsv and tables/); "
        "see docs/getting-started.md#running-the-tests.",
        yellow=True,
    )
