"""Helpers of the client tests: profiles, tables and the server configuration they share."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
from deltalake import write_deltalake

import sharing_server as server_process
from corpus import corpus_table

TOKEN: str = server_process.TOKEN


def write_profile(path: Path, endpoint: str, **extra: Any) -> Path:
    profile = {"shareCredentialsVersion": 1, "endpoint": endpoint, "bearerToken": TOKEN, **extra}
    path.write_text(json.dumps(profile))
    return path


def write_many_small_files(root: Path, n_files: int, rows_per_file: int = 50) -> Path:
    """One deltalake append per batch of files: ``n_files`` real data files."""
    for i in range(n_files):
        start = i * rows_per_file
        data = pa.table(
            {
                "id": pa.array(range(start, start + rows_per_file), pa.int64()),
                "part": pa.array([f"p{i % 4}"] * rows_per_file),
                "x": pa.array([float(v) / 3 for v in range(start, start + rows_per_file)]),
            }
        )
        write_deltalake(str(root), data, mode="append", partition_by=["part"])
    return root


CDF_TABLES = {
    "cdf": "drs__cdf-table",
    "cdf_dv": "drs__cdf-table-with-cdc-and-dvs",
    "cdf_cm": "krs__cdf-column-mapping-name-mode",
    "cdf_dv_pairs": "krs__cdf-table-with-dv",
}


def client_server_config(tables: dict[str, Path], **settings: Any) -> dict[str, Any]:
    return {
        "version": 1,
        "authorization": {"bearerToken": "${DELTAPORT_TEST_TOKEN}"},
        "signingKey": "client-tests-signing-key",
        **settings,
        "shares": [
            {
                "name": "share1",
                "schemas": [
                    {
                        "name": "default",
                        "tables": [
                            {"name": name, "location": str(path), "historyShared": True}
                            for name, path in tables.items()
                        ],
                    },
                    {
                        "name": "other",
                        "tables": [{"name": "again", "location": str(tables["basic"])}],
                    },
                    {
                        "name": "cdf",
                        "tables": [
                            {
                                "name": alias,
                                "location": str(corpus_table(name).path),
                                "historyShared": True,
                            }
                            for alias, name in CDF_TABLES.items()
                        ],
                    },
                ],
            },
            {"name": "share2", "schemas": []},
        ],
    }
