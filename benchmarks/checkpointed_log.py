"""Delta logs of many files for the benchmarks: a classic checkpoint written with Arrow
kernels in the protocol's checkpoint schema, and small JSON commits after it. The data
files are not written (a benchmark that reads them writes them itself, at
:func:`file_path`, ``size`` bytes each)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

CHECKPOINT_VERSION = 10
PARTITIONS = 64
SCHEMA_STRING = json.dumps(
    {
        "type": "struct",
        "fields": [
            {"name": "id", "type": "long", "nullable": True, "metadata": {}},
            {"name": "part", "type": "string", "nullable": True, "metadata": {}},
        ],
    }
)
STRING_MAP = pa.map_(pa.string(), pa.string())
ADD_TYPE = pa.struct(
    [
        ("path", pa.string()),
        ("partitionValues", STRING_MAP),
        ("size", pa.int64()),
        ("modificationTime", pa.int64()),
        ("dataChange", pa.bool_()),
        ("stats", pa.string()),
        ("tags", STRING_MAP),
    ]
)
METADATA_TYPE = pa.struct(
    [
        ("id", pa.string()),
        ("name", pa.string()),
        ("description", pa.string()),
        ("format", pa.struct([("provider", pa.string()), ("options", STRING_MAP)])),
        ("schemaString", pa.string()),
        ("partitionColumns", pa.list_(pa.string())),
        ("configuration", STRING_MAP),
        ("createdTime", pa.int64()),
    ]
)
PROTOCOL_TYPE = pa.struct([("minReaderVersion", pa.int32()), ("minWriterVersion", pa.int32())])
REMOVE_TYPE = pa.struct(
    [("path", pa.string()), ("deletionTimestamp", pa.int64()), ("dataChange", pa.bool_())]
)
TXN_TYPE = pa.struct([("appId", pa.string()), ("version", pa.int64()), ("lastUpdated", pa.int64())])
_FILE_SUFFIX = "-0f4c1f2e-6a8e-4d7b-9a57-c000.snappy.parquet"


def file_path(i: int) -> str:
    """The path of file number ``i`` (as :func:`write_checkpoint` names them)."""
    return f"part={i % PARTITIONS}/part-{i:07d}{_FILE_SUFFIX}"


def file_stats(i: int) -> str:
    return (
        f'{{"numRecords":100,"minValues":{{"id":{i * 100}}},"maxValues":{{"id":{i * 100 + 99}}}}}'
    )


def _text(*parts: pa.Array | str) -> pa.Array:
    return pc.binary_join_element_wise(*parts, "")


def write_checkpoint(log: Path, n_files: int, table_id: str, size: int = 1000) -> None:
    """A checkpoint at :data:`CHECKPOINT_VERSION` holding ``n_files`` adds (files 0..n-1)
    of ``size`` bytes each."""
    ids = pa.array(range(n_files), pa.int64())
    digits = pc.utf8_lpad(pc.cast(ids, pa.string()), 7, "0")
    part = pc.cast(pc.bit_wise_and(ids, PARTITIONS - 1), pa.string())
    low = pc.cast(pc.multiply(ids, 100), pa.string())
    high = pc.cast(pc.add(pc.multiply(ids, 100), 99), pa.string())
    offsets = pa.array(range(n_files + 1), pa.int32())
    adds = pa.StructArray.from_arrays(
        [
            _text("part=", part, "/part-", digits, _FILE_SUFFIX),
            pa.MapArray.from_arrays(offsets, pa.array(["part"] * n_files), part),
            pa.array([size] * n_files, pa.int64()),
            pa.array([1_700_000_000_000] * n_files, pa.int64()),
            pa.array([False] * n_files),
            _text('{"numRecords":100,"minValues":{"id":', low, '},"maxValues":{"id":', high, "}}"),
            pa.nulls(n_files, STRING_MAP),
        ],
        fields=list(ADD_TYPE),
    )
    metadata = {
        "id": table_id,
        "name": None,
        "description": None,
        "format": {"provider": "parquet", "options": []},
        "schemaString": SCHEMA_STRING,
        "partitionColumns": ["part"],
        "configuration": [],
        "createdTime": 1_700_000_000_000,
    }
    rows = n_files + 2
    table = pa.table(
        {
            "txn": pa.nulls(rows, TXN_TYPE),
            "add": pa.concat_arrays([pa.nulls(2, ADD_TYPE), adds]),
            "remove": pa.nulls(rows, REMOVE_TYPE),
            "metaData": pa.array([metadata, *[None] * (rows - 1)], METADATA_TYPE),
            "protocol": pa.array(
                [None, {"minReaderVersion": 1, "minWriterVersion": 2}, *[None] * n_files],
                PROTOCOL_TYPE,
            ),
        }
    )
    log.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, log / f"{CHECKPOINT_VERSION:020d}.checkpoint.parquet")
    (log / "_last_checkpoint").write_text(json.dumps({"version": CHECKPOINT_VERSION, "size": rows}))


def write_commit(log: Path, version: int, n_files: int, adds: int = 10, size: int = 1000) -> None:
    """Commit ``version`` after the checkpoint: ``adds`` new files of ``size`` bytes, and
    file ``version`` removed."""
    first = n_files + (version - CHECKPOINT_VERSION - 1) * adds
    lines: list[dict[str, object]] = [
        {"commitInfo": {"timestamp": 1_700_000_000_000 + version, "operation": "WRITE"}}
    ]
    lines += [
        {
            "add": {
                "path": file_path(first + k),
                "partitionValues": {"part": str((first + k) % PARTITIONS)},
                "size": size,
                "modificationTime": 1_700_000_000_000,
                "dataChange": True,
                "stats": file_stats(first + k),
            }
        }
        for k in range(adds)
    ]
    if adds:
        lines.append(
            {"remove": {"path": file_path(version), "deletionTimestamp": 1, "dataChange": True}}
        )
    text = "\n".join(json.dumps(line) for line in lines) + "\n"
    (log / f"{version:020d}.json").write_text(text)
