"""Helpers shared by the Spark tests: the server-process helpers of tests/server (loaded
under another module name, as several folders have a ``conftest`` module), table names
and deltalake writes."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pyarrow as pa
from deltalake import write_deltalake

CORPUS_TABLES = (
    "dat__all_primitive_types",
    "dat__nested_types",
    "golden__basic-decimal-table",
    "golden__data-reader-map",
    "dat__multi_partitioned_2",
    "golden__data-reader-timestamp_ntz",
    "golden__dv-with-columnmapping",
    "golden__dv-partitioned-with-checkpoint",
    "golden-krs__table-with-columnmapping-mode-name",
)
"""A representative subset: primitives, nesting, decimals, maps, partition values with
nulls and special characters, timestamp_ntz, deletion vectors and column mapping."""


STREAM_TABLES = ("snap", "grow", "deletes", "polled")
"""Tables of three appends (ids 0-5, two per commit) that streaming tests read and write."""


def _load_server_fixtures() -> ModuleType:
    path = Path(__file__).resolve().parents[1] / "server" / "conftest.py"
    spec = importlib.util.spec_from_file_location("spark_server_process_fixtures", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


server_process = _load_server_fixtures()
TOKEN: str = server_process.TOKEN


def append(root: Path, ids: range, *, mode: str = "append") -> None:
    """Write rows ``ids`` (columns id: long, name: string) with deltalake."""
    data = pa.table(
        {
            "id": pa.array(list(ids), pa.int64()),
            "name": pa.array([f"n{i}" for i in ids]),
        }
    )
    write_deltalake(
        str(root), data, mode=mode, configuration={"delta.enableChangeDataFeed": "true"}
    )


def table_url(profile: str, name: str) -> str:
    return f"{profile}#s.d.{name.replace('-', '_')}"
