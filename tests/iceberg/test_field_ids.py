"""Field ids are a function of the Delta log alone: two servers with their own metadata
directories and two sharing one serve the same ids for the same version, before and after
a schema change and a restart, and the ids are the ones the documented rule gives (the
schema history walked in version order, each new field path taking the next id)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa
from deltalake import write_deltalake
from pyiceberg.catalog.rest import TableResponse
from pyiceberg.types import NestedField, StructType

from sharing_server import TOKEN, RunningServer, start_server, stop_server, table_entry

TABLE = "/iceberg/v1/shares/Sales/namespaces/d/tables/t"

V0 = {"a": 1, "s": 2, "s.x": 3, "b": 4}
V1 = {"a": 1, "s": 2, "s.x": 3, "s.y": 5, "c": 6, "d": 7}
V2 = {**V1, "e": 8}
"""What the rule gives: version 0 numbered depth first; version 1 replaced the schema
(``b`` gone, ``s.y`` inside the struct, ``c`` and ``d`` new), version 2 appended ``e``."""


def _rows(version: int) -> pa.Table:
    struct = {"x": pa.array([1, 2], pa.int64())}
    if version >= 1:
        struct["y"] = pa.array([3, 4], pa.int64())
    columns: dict[str, Any] = {"a": pa.array([1, 2], pa.int64())}
    columns["s"] = pa.StructArray.from_arrays(list(struct.values()), list(struct))
    if version == 0:
        columns["b"] = ["x", "y"]
    else:
        columns["c"] = ["x", "y"]
        columns["d"] = pa.array([5, 6], pa.int64())
    if version >= 2:
        columns["e"] = pa.array([7, 8], pa.int64())
    return pa.table(columns)


def _config(table: Path, metadata: Path) -> dict[str, Any]:
    return {
        "version": 1,
        "authorization": {"bearerToken": "${DELTAPORT_TEST_TOKEN}"},
        "signingKey": "a-fixed-key-for-tests",
        "iceberg": {"metadataDirectory": str(metadata)},
        "shares": [
            {"name": "Sales", "schemas": [{"name": "d", "tables": [table_entry("t", table)]}]}
        ],
    }


def _paths(fields: tuple[NestedField, ...], prefix: str = "") -> dict[str, int]:
    out: dict[str, int] = {}
    for f in fields:
        out[prefix + f.name] = f.field_id
        if isinstance(f.field_type, StructType):
            out.update(_paths(f.field_type.fields, prefix + f.name + "."))
    return out


def _ids(server: RunningServer) -> tuple[str, dict[str, int]]:
    """The version served and the current schema's field ids, read through pyiceberg's
    own model of a load-table answer."""
    answer = httpx.get(
        server.base + TABLE, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60
    )
    assert answer.status_code == 200, answer.text
    metadata = TableResponse.model_validate_json(answer.content).metadata
    return metadata.properties["delta.version"], _paths(metadata.schema().fields)


def test_replicas_serve_the_same_field_ids(tmp_path: Path) -> None:
    table = tmp_path / "t"
    write_deltalake(str(table), _rows(0))
    homes = {
        "own-1": tmp_path / "meta-own-1",
        "own-2": tmp_path / "meta-own-2",
        "shared-1": tmp_path / "meta-shared",
        "shared-2": tmp_path / "meta-shared",
    }

    def start(names: list[str], round_: int) -> dict[str, RunningServer]:
        with ThreadPoolExecutor(len(names)) as pool:
            started = pool.map(
                lambda n: start_server(_config(table, homes[n]), tmp_path / f"{n}-{round_}"),
                names,
            )
            return dict(zip(names, started, strict=True))

    servers = start(["own-1", "shared-1"], 0)
    try:
        assert {n: _ids(s) for n, s in servers.items()} == {n: ("0", V0) for n in servers}
        # the schema is replaced; the other two see the table first at version 1
        write_deltalake(str(table), _rows(1), mode="overwrite", schema_mode="overwrite")
        servers.update(start(["own-2", "shared-2"], 0))
        assert {n: _ids(s) for n, s in servers.items()} == {n: ("1", V1) for n in homes}
    finally:
        for server in servers.values():
            stop_server(server)
    servers = start(list(homes), 1)
    try:
        assert {n: _ids(s) for n, s in servers.items()} == {n: ("1", V1) for n in homes}
        write_deltalake(str(table), _rows(2), mode="append", schema_mode="merge")
        assert {n: _ids(s) for n, s in servers.items()} == {n: ("2", V2) for n in homes}
    finally:
        for server in servers.values():
            stop_server(server)
