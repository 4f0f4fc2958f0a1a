"""Snapshot load speed against deltalake on a checkpointed table of 100,000 add files.

Builds a log-only table (a classic checkpoint at version 10 written with pyarrow in the
protocol's checkpoint schema, then three JSON commits), times a cold snapshot load with
deltaport and ``deltalake.DeltaTable(path).get_add_actions()`` in the same run, then one
incremental update after one more commit. Run: ``uv run python benchmarks/bench_snapshot.py``.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import deltalake
import pyarrow as pa
import pyarrow.parquet as pq

from deltaport.delta import DeltaTable

N_FILES = 100_000
CHECKPOINT_VERSION = 10
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


def _path(i: int) -> str:
    return f"part={i % 100}/part-{i:06d}-0f4c1f2e-6a8e-4d7b-9a57-6a1d2c3b4e5f-c000.snappy.parquet"


def _stats(i: int) -> str:
    return (
        f'{{"numRecords":100,"minValues":{{"id":{i * 100}}},'
        f'"maxValues":{{"id":{i * 100 + 99}}},"nullCount":{{"id":0}}}}'
    )


def write_checkpoint(log: Path) -> None:
    n = N_FILES
    adds = pa.StructArray.from_arrays(
        [
            pa.array([_path(i) for i in range(n)]),
            pa.array([[("part", str(i % 100))] for i in range(n)], STRING_MAP),
            pa.array([1000 + i % 7 for i in range(n)], pa.int64()),
            pa.array([1_700_000_000_000 + i for i in range(n)], pa.int64()),
            pa.array([False] * n),
            pa.array([_stats(i) for i in range(n)]),
            pa.nulls(n, STRING_MAP),
        ],
        fields=list(ADD_TYPE),
    )
    metadata = {
        "id": "bench",
        "name": None,
        "description": None,
        "format": {"provider": "parquet", "options": []},
        "schemaString": SCHEMA_STRING,
        "partitionColumns": ["part"],
        "configuration": [],
        "createdTime": 1_700_000_000_000,
    }
    rows = n + 2
    table = pa.table(
        {
            "txn": pa.nulls(rows, TXN_TYPE),
            "add": pa.concat_arrays([pa.nulls(2, ADD_TYPE), adds]),
            "remove": pa.nulls(rows, REMOVE_TYPE),
            "metaData": pa.array([metadata, *[None] * (rows - 1)], METADATA_TYPE),
            "protocol": pa.array(
                [None, {"minReaderVersion": 1, "minWriterVersion": 2}, *[None] * n],
                PROTOCOL_TYPE,
            ),
        }
    )
    pq.write_table(table, log / f"{CHECKPOINT_VERSION:020d}.checkpoint.parquet")
    (log / "_last_checkpoint").write_text(json.dumps({"version": CHECKPOINT_VERSION, "size": rows}))


def write_commit(log: Path, version: int) -> None:
    first = N_FILES + (version - CHECKPOINT_VERSION) * 10
    lines = [{"commitInfo": {"timestamp": 1_700_000_000_000 + version, "operation": "WRITE"}}]
    lines += [
        {
            "add": {
                "path": _path(first + k),
                "partitionValues": {"part": str((first + k) % 100)},
                "size": 1000,
                "modificationTime": 1_700_000_000_000,
                "dataChange": True,
                "stats": _stats(first + k),
            }
        }
        for k in range(10)
    ]
    lines.append({"remove": {"path": _path(version), "deletionTimestamp": 1, "dataChange": True}})
    text = "\n".join(json.dumps(line) for line in lines) + "\n"
    (log / f"{version:020d}.json").write_text(text)


def best_of(runs: int, fn: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) if runs < 3 else statistics.median(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "table"
        log = root / "_delta_log"
        log.mkdir(parents=True)
        write_checkpoint(log)
        for version in range(CHECKPOINT_VERSION + 1, CHECKPOINT_VERSION + 4):
            write_commit(log, version)
        expected = N_FILES + 3 * 10 - 3

        ours = DeltaTable(str(root)).snapshot()
        theirs = deltalake.DeltaTable(str(root)).get_add_actions()
        assert ours.num_files == expected == theirs.num_rows, (ours.num_files, theirs.num_rows)

        cold = best_of(5, lambda: DeltaTable(str(root)).snapshot())
        peer = best_of(5, lambda: deltalake.DeltaTable(str(root)).get_add_actions())
        print(
            f"cold snapshot, {expected} files: deltaport {cold * 1000:.0f} ms, "
            f"deltalake {peer * 1000:.0f} ms, ratio {cold / peer:.2f}x (target <= 1.5x)"
        )

        table = DeltaTable(str(root))
        table.snapshot()
        updates = []
        for version in range(CHECKPOINT_VERSION + 4, CHECKPOINT_VERSION + 9):
            write_commit(log, version)
            start = time.perf_counter()
            updated = table.snapshot()
            updates.append(time.perf_counter() - start)
            assert updated.version == version
        cold_updated = DeltaTable(str(root)).snapshot()
        assert updated.num_files == cold_updated.num_files == expected + 5 * 9
        incremental = statistics.median(updates)
        print(
            f"incremental update after one commit (median of 5): {incremental * 1000:.1f} ms "
            f"(target < 50 ms)"
        )
        print(f"num_records: {updated.num_records} ({N_FILES // 1000}k files)")


if __name__ == "__main__":
    main()
