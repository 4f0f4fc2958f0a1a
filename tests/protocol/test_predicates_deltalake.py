"""File skipping on tables written by delta-rs: real stats and partition value formats
(millisecond-truncated timestamps, ``timestamp_ntz`` with a space, float32 stats, nested
struct stats, null partitions), checked against the rows of each data file."""

from __future__ import annotations

import datetime as dt
import json
import random
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import write_deltalake

from deltaport.delta.model import FILE_SCHEMA
from deltaport.protocol.predicates import evaluate_rows, file_mask, parse_sql_predicates

SCHEMA = pa.schema(
    [
        ("id", pa.int32()),
        ("big", pa.int64()),
        ("s", pa.string()),
        ("ts", pa.timestamp("us", "UTC")),
        ("ntz", pa.timestamp("us")),
        ("dec", pa.decimal128(10, 2)),
        ("f", pa.float32()),
        ("d", pa.date32()),
        ("st", pa.struct([("x", pa.int64())])),
        ("p", pa.string()),
        ("pt", pa.timestamp("us", "UTC")),
    ]
)
COLUMN_TYPES = {
    "id": "integer",
    "big": "long",
    "s": "string",
    "ts": "timestamp",
    "ntz": "timestamp_ntz",
    "dec": "decimal(10,2)",
    "f": "float",
    "d": "date",
    "st.x": "long",
    "p": "string",
    "pt": "timestamp",
}
PARTITIONS = ["p", "pt"]
BASE = dt.datetime(2021, 1, 1, tzinfo=dt.UTC)


def batch(rng: random.Random, offset: int) -> pa.Table:
    def maybe(value: Any) -> Any:
        return None if rng.random() < 0.15 else value

    rows = []
    for _ in range(rng.randint(1, 5)):
        micros = offset * 86_400_000_000 + rng.choice([0, 1500, 999, 1_000_000])
        rows.append(
            {
                "id": maybe(offset * 10 + rng.randint(0, 9)),
                "big": maybe(2**62 + offset),
                "s": maybe(rng.choice(["a", "b", "é", "z" * 40]) + str(offset)),
                "ts": maybe(BASE + dt.timedelta(microseconds=micros)),
                "ntz": maybe(BASE.replace(tzinfo=None) + dt.timedelta(microseconds=micros)),
                "dec": maybe(Decimal(offset * 100 + rng.randint(0, 99)) / 100),
                "f": maybe(rng.choice([0.1, 0.2, 0.3]) + offset),
                "d": maybe(BASE.date() + dt.timedelta(days=offset)),
                "st": maybe({"x": maybe(offset)}),
                "p": rng.choice([None, "eu", "us"]),
                "pt": rng.choice([None, BASE + dt.timedelta(hours=offset, microseconds=1)]),
            }
        )
    return pa.Table.from_pylist(rows, schema=SCHEMA)


@pytest.fixture(scope="module")
def table_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[pa.Table, list[pa.Table]]:
    root = tmp_path_factory.mktemp("skipping") / "table"
    rng = random.Random(7)
    for offset in range(8):
        write_deltalake(str(root), batch(rng, offset), partition_by=PARTITIONS, mode="append")
    adds = []
    for log in sorted((root / "_delta_log").glob("*.json")):
        for line in log.read_text().splitlines():
            action = json.loads(line)
            if "add" in action:
                adds.append(action["add"])
    files = pa.Table.from_pylist(
        [
            {
                "path": add["path"],
                "partition_values": list(add["partitionValues"].items()),
                "stats": add.get("stats"),
            }
            for add in adds
        ],
        schema=FILE_SCHEMA,
    )
    return files, [_rows(root, add) for add in adds]


def _rows(root: Path, add: dict[str, Any]) -> pa.Table:
    data = pq.read_table(root / unquote(add["path"]))
    count = data.num_rows
    p = add["partitionValues"].get("p")
    pt = add["partitionValues"].get("pt")
    pt_value = None if pt is None else dt.datetime.fromisoformat(pt).replace(tzinfo=dt.UTC)
    data = data.append_column("p", pa.array([p] * count, pa.string()))
    data = data.append_column("pt", pa.array([pt_value] * count, pa.timestamp("us", "UTC")))
    return data.select(SCHEMA.names).cast(SCHEMA)


HINTS = [
    "id = 42",
    "id < 15",
    "id >= 70 AND id IS NOT NULL",
    "NOT id > 20",
    "big > 4611686018427387905",
    "big = 4611686018427387904",
    "s = 'a3'",
    "s >= 'z'",
    f"s > '{'z' * 40}'",
    "s < 'b'",
    "ts > '2021-01-03 00:00:00.001'",
    "ts <= TIMESTAMP '2021-01-02 00:00:00.0015'",
    "ts = '2021-01-05 00:00:01'",
    "ntz >= '2021-01-06 00:00:00.0015'",
    "ntz < '2021-01-02'",
    "dec > 5.5",
    "dec <= 1.05",
    "f > 5.1",
    "f = 0.1",
    "NOT f < 7",
    "d = '2021-01-04'",
    "d > DATE '2021-01-06'",
    "st.x = 3",
    "st.x IS NULL",
    "p = 'eu'",
    "p IS NULL",
    "p <> 'us'",
    "pt = '2021-01-01 03:00:00.000001'",
    "pt > '2021-01-01 05:00:00'",
    "pt IS NULL OR id < 5",
    "NOT (p = 'eu' OR d < '2021-01-03')",
    "(id > 30 AND s < 'b') OR (ts IS NULL AND p = 'us')",
]


@pytest.mark.parametrize("hint", HINTS)
def test_no_matching_file_is_dropped(
    table_files: tuple[pa.Table, list[pa.Table]], hint: str
) -> None:
    files, rows = table_files
    expr = parse_sql_predicates([hint])
    mask = file_mask(expr, files, COLUMN_TYPES, PARTITIONS).to_pylist()
    for keep, file_rows in zip(mask, rows, strict=True):
        if any(evaluate_rows(expr, file_rows).to_pylist()):
            assert keep, (hint, file_rows.to_pylist())


def test_files_are_pruned(table_files: tuple[pa.Table, list[pa.Table]]) -> None:
    files, rows = table_files
    for hint in ["id >= 70", "d = '2021-01-04'", "dec > 5.5", "ts > '2021-01-07 00:00:00.5'"]:
        mask = file_mask(parse_sql_predicates([hint]), files, COLUMN_TYPES, PARTITIONS)
        assert 0 < mask.true_count < len(rows) / 2, hint
