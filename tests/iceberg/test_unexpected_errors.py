"""An unexpected failure under the Iceberg catalog is answered in the specification's error
shape (an Iceberg reader parses no other), its cause logged and not in the body."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
from deltalake import write_deltalake

from sharing_server import TOKEN, start_server, stop_server, table_entry

TABLE = "/iceberg/v1/shares/Sales/namespaces/d/tables/ranges"


def _config(table: Path, metadata: Path) -> dict[str, Any]:
    return {
        "version": 1,
        "authorization": {"bearerToken": "${DELTAPORT_TEST_TOKEN}"},
        "signingKey": "a-fixed-key-for-tests",
        "iceberg": {"metadataDirectory": str(metadata)},
        "shares": [
            {"name": "Sales", "schemas": [{"name": "d", "tables": [table_entry("ranges", table)]}]}
        ],
    }


def test_a_corrupt_bookkeeping_file_is_a_500_in_the_iceberg_shape(tmp_path: Path) -> None:
    write_deltalake(str(tmp_path / "ranges"), pa.table({"id": pa.array([1, 2], pa.int64())}))
    config = _config(tmp_path / "ranges", tmp_path / "metadata")
    server = start_server(config, tmp_path / "first")
    try:
        with server.client() as http:
            assert http.get(server.base + TABLE).status_code == 200
    finally:
        stop_server(server)
    (saved,) = (tmp_path / "metadata").rglob("snapshots.jsonl")
    saved.write_text('{"entry": {"version": 0, ')  # cut short, as a full disk leaves it
    server = start_server(config, tmp_path / "second")
    try:
        with server.client() as http:
            answer = http.get(server.base + TABLE)
            listed = http.get(server.base + "/iceberg/v1/shares/Sales/namespaces/d/tables")
    finally:
        stop_server(server)
    assert answer.status_code == 500
    error = answer.json()["error"]
    assert error["type"] == "InternalServerError" and error["code"] == 500
    assert "errorCode" not in answer.json() and "snapshots" not in error["message"]
    assert listed.status_code == 200  # the catalog itself still answers
    log = server.log()
    assert f"unexpected error on GET '{TABLE}'" in log and "JSONDecodeError" in log
    assert TOKEN not in log
