"""A Delta table whose data files were written by different writers, one commit each.

The official client's parquet path types each file's columns as that file holds them, so
its dtypes for this table come from mixing: a timestamp column stored as Spark's INT96
(naive nanoseconds when read), as UTC-adjusted microseconds and as UTC milliseconds; an
integer and a double column the first file lacks (added later); a timestamp partition
column whose values are written to the second, to the millisecond, and null. The change
data feed is on, so each file is also a version's inserts.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

SCHEMA = {
    "type": "struct",
    "fields": [
        {"name": "id", "type": "long", "nullable": True, "metadata": {}},
        {"name": "ts", "type": "timestamp", "nullable": True, "metadata": {}},
        {"name": "extra", "type": "integer", "nullable": True, "metadata": {}},
        {"name": "score", "type": "double", "nullable": True, "metadata": {}},
        {"name": "part", "type": "timestamp", "nullable": True, "metadata": {}},
    ],
}
WRITTEN = 1_704_067_200_000
"""The files' modification time (2024-01-01T00:00:00Z in epoch milliseconds)."""


def _file(ids: list[int], ts_type: pa.DataType, extra: bool) -> pa.Table:
    stamps = [datetime(2024, 3, 1, 10, 0, i, 123_000, tzinfo=UTC) for i in ids]
    columns = {"id": pa.array(ids, pa.int64()), "ts": pa.array(stamps, ts_type)}
    if extra:
        columns["extra"] = pa.array([i * 100 for i in ids], pa.int32())
        columns["score"] = pa.array([i / 4 for i in ids], pa.float64())
    return pa.table(columns)


FILES = [
    # (file, how it is written, its partition value)
    (_file([1, 2], pa.timestamp("us", "UTC"), False), {"int96": True}, "2024-01-01 00:00:00"),
    (_file([3, 4], pa.timestamp("us", "UTC"), True), {}, "2024-01-02 03:04:05.500"),
    (_file([5], pa.timestamp("ms", "UTC"), True), {}, None),
]


def write_mixed_table(root: Path) -> Path:
    """The table at ``root``: version 0 creates it with the first file, versions 1 and 2
    add one file each."""
    log = root / "_delta_log"
    log.mkdir(parents=True)
    for version, (data, options, part) in enumerate(FILES):
        name = f"part-{version:05d}-mixed.parquet"
        pq.write_table(data, root / name, use_deprecated_int96_timestamps=bool(options))
        add = {
            "path": name,
            "partitionValues": {"part": part},
            "size": (root / name).stat().st_size,
            "modificationTime": WRITTEN,
            "dataChange": True,
        }
        actions: list[dict[str, object]] = []
        if version == 0:
            actions += [
                {"protocol": {"minReaderVersion": 1, "minWriterVersion": 4}},
                {
                    "metaData": {
                        "id": "mixed-writers",
                        "format": {"provider": "parquet", "options": {}},
                        "schemaString": json.dumps(SCHEMA),
                        "partitionColumns": ["part"],
                        "configuration": {"delta.enableChangeDataFeed": "true"},
                        "createdTime": WRITTEN,
                    }
                },
            ]
        actions.append({"add": add})
        commit = log / f"{version:020d}.json"
        commit.write_text("".join(json.dumps(a) + "\n" for a in actions))
    return root
