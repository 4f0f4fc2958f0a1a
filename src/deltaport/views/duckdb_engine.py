"""The embedded engine: DuckDB in the server's process.

DuckDB scans Arrow without copying it, is the dialect sqlglot writes best, streams its
result and keeps within a memory limit. Each run opens its own connection with that limit,
a thread count, and no file system, network or extension access: a view reads only the
Arrow sources it is handed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import duckdb
import pyarrow as pa

from deltaport.views.engine import ArrowSource


class DuckDBEngine:
    dialect = "duckdb"

    def __init__(
        self, *, memory_limit: str = "1GB", threads: int = 1, batch_rows: int = 65_536
    ) -> None:
        self.memory_limit = memory_limit
        self.threads = threads
        self.batch_rows = batch_rows

    def _connect(self) -> duckdb.DuckDBPyConnection:
        return duckdb.connect(
            ":memory:",
            config={
                "memory_limit": self.memory_limit,
                "threads": self.threads,
                "enable_external_access": False,
                "autoinstall_known_extensions": False,
                "autoload_known_extensions": False,
                "lock_configuration": True,
            },
        )

    def run(self, sql: str, sources: Mapping[str, ArrowSource]) -> pa.RecordBatchReader:
        """The rows as a stream; the connection closes when the stream is read to its end
        or dropped."""
        connection = self._connect()
        try:
            for name, source in sources.items():
                connection.register(name, source)
            result = connection.execute(sql).to_arrow_reader(self.batch_rows)
        except BaseException:
            connection.close()
            raise

        def batches() -> Iterator[pa.RecordBatch]:
            try:
                yield from result
            finally:
                connection.close()

        return pa.RecordBatchReader.from_batches(result.schema, batches())
