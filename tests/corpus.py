"""The shared Delta corpus (../shared/delta-corpus, or ``DELTAPORT_CORPUS``), read in place.

Without it, every test that asks for a corpus table is skipped (a module that lists the corpus
to parametrise is skipped whole) with :data:`MISSING_REASON`; the conftest counts those skips
in the run's last lines.
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

CORPUS_ROOT = Path(
    os.environ.get(
        "DELTAPORT_CORPUS", Path(__file__).resolve().parents[2] / "shared" / "delta-corpus"
    )
)
MANIFEST = CORPUS_ROOT / "MANIFEST.tsv"
MISSING_REASON = f"needs the Delta corpus: no {MANIFEST}"


@dataclass(frozen=True)
class CorpusTable:
    name: str
    path: Path  # the table root (holds _delta_log)
    tags: frozenset[str]
    protocol: str
    latest_version: int | None
    expected_format: str
    expected_path: Path | None
    deltalake_reads: str
    deltalake_rows: str
    deltalake_rows_by_version: str
    deltalake_sql_reads: str
    expected_check: str
    notes: str
    row: dict[str, str]

    @property
    def negative(self) -> bool:
        return "negative" in self.tags

    @property
    def data_missing(self) -> bool:
        return "data-files-missing" in self.tags


@cache
def corpus_tables() -> tuple[CorpusTable, ...]:
    """The corpus's tables; skips the calling test (or module, at import) when it is missing."""
    if not MANIFEST.is_file():
        pytest.skip(MISSING_REASON, allow_module_level=True)
    out = []
    with MANIFEST.open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            root = CORPUS_ROOT / row["table_path"]
            exp = row.get("expected_path") or ""
            lv = row.get("latest_version") or ""
            out.append(
                CorpusTable(
                    name=row["name"],
                    path=root,
                    tags=frozenset(t for t in row["feature_tags"].split(",") if t),
                    protocol=row["protocol"],
                    latest_version=int(lv) if lv.lstrip("-").isdigit() else None,
                    expected_format=row.get("expected_format") or "",
                    expected_path=(CORPUS_ROOT / exp) if exp else None,
                    deltalake_reads=row.get("deltalake_reads") or "",
                    deltalake_rows=row.get("deltalake_rows") or "",
                    deltalake_rows_by_version=row.get("deltalake_rows_by_version") or "",
                    deltalake_sql_reads=row.get("deltalake_sql_reads") or "",
                    expected_check=row.get("expected_check") or "",
                    notes=row.get("notes") or "",
                    row=row,
                )
            )
    return tuple(out)


def corpus_table(name: str) -> CorpusTable:
    for t in corpus_tables():
        if t.name == name:
            return t
    raise KeyError(name)
