"""What a view's engine does: run SQL already bound and rewritten for it over named Arrow
sources, and stream the rows back. The embedded engine is `duckdb_engine`; Spark's lives
in `spark/`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, TypeAlias

import pyarrow as pa

ArrowSource: TypeAlias = pa.Table | pa.RecordBatchReader


class Engine(Protocol):
    dialect: str  # the sqlglot dialect its SQL is written in (`bound_sql(..., dialect=)`)

    def run(self, sql: str, sources: Mapping[str, ArrowSource]) -> pa.RecordBatchReader:
        """Rows of ``sql``, whose relations are the keys of ``sources``. For a row-local
        view the caller feeds one source file's rows at a time."""
        ...
