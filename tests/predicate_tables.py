"""Random small tables of files for the property "file skipping never drops a file that
holds a matching row" (``tests/protocol/test_predicates_property.py``, and the hints as
the query route reads them in ``tests/server/test_hint_properties.py``).

Random small files (with nulls, NaN, long strings, sub-millisecond timestamps, null
partitions, missing stats) get stats computed the way Delta writers do (min/max of the
non-null values, strings truncated to 32 characters, timestamps truncated to
milliseconds, float32 values printed in shortest form); random predicates, JSON-typed and
SQL-untyped, some deliberately comparing across types, are evaluated on the files
(:func:`file_mask`) and on their rows (:func:`evaluate_rows`).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import random
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa

from deltaport.delta.model import FILE_SCHEMA
from deltaport.protocol.predicates import (
    And,
    Column,
    Comparison,
    Expr,
    IsNull,
    Literal,
    Not,
    Or,
)

ROW_SCHEMA = pa.schema(
    [
        ("i", pa.int32()),
        ("l", pa.int64()),
        ("d", pa.float64()),
        ("f", pa.float32()),
        ("s", pa.string()),
        ("dt", pa.date32()),
        ("ts", pa.timestamp("us", "UTC")),
        ("dec", pa.decimal128(10, 2)),
        ("b", pa.bool_()),
        ("st", pa.struct([("x", pa.int64())])),
        ("pi", pa.int32()),
        ("pd", pa.date32()),
    ]
)
COLUMN_TYPES = {
    "i": "integer",
    "l": "long",
    "d": "double",
    "f": "float",
    "s": "string",
    "dt": "date",
    "ts": "timestamp",
    "dec": "decimal(10,2)",
    "b": "boolean",
    "st.x": "long",
    "pi": "integer",
    "pd": "date",
}
PARTITIONS = ("pi", "pd")
VALUE_TYPES = {
    "i": ["int"],
    "l": ["long"],
    "d": ["double"],
    "f": ["float", "double"],
    "s": ["string"],
    "dt": ["date"],
    "ts": ["timestamp"],
    "dec": ["double"],
    "b": ["bool"],
    "st.x": ["long"],
    "pi": ["int"],
    "pd": ["date"],
}
OPS = ["equal", "lessThan", "lessThanOrEqual", "greaterThan", "greaterThanOrEqual"]
BASE_TS = dt.datetime(2021, 6, 1, tzinfo=dt.UTC)
LONG_PREFIX = "x" * 31


def random_value(rng: random.Random, column: str) -> Any:
    match column:
        case "i" | "pi":
            return rng.randint(-4, 4)
        case "l" | "st.x":
            return rng.choice([rng.randint(-4, 4), 2**62 + rng.randint(-2, 2)])
        case "d":
            return rng.choice([rng.randint(-6, 6) / 2, math.nan])
        case "f":
            return float(np.float32(rng.choice([0.1, 0.2, 0.3, -0.1, 1.0, 2.5])))
        case "s":
            return rng.choice(
                ["", "a", "ab", "b", "é", LONG_PREFIX + "a", LONG_PREFIX + "ab", LONG_PREFIX + "b"]
            )
        case "dt" | "pd":
            return dt.date(2021, 1, 1) + dt.timedelta(days=rng.randint(0, 5))
        case "ts":
            return BASE_TS + dt.timedelta(microseconds=rng.choice([0, 1, 999, 1000, 1500, 2000]))
        case "dec":
            return Decimal(rng.randint(-300, 300)) / 100
        case "b":
            return rng.random() < 0.5
    raise AssertionError(column)


def random_literal(rng: random.Random, column: str, value_type: str) -> Literal:
    value = random_value(rng, column)
    if column == "d" and isinstance(value, float) and math.isnan(value):
        value = 0.5
    if value_type in ("float", "double"):
        value = Decimal(str(value))
    return Literal(value, value_type)  # type: ignore[arg-type]


def random_leaf_predicate(rng: random.Random) -> Expr:
    column = rng.choice(list(COLUMN_TYPES))
    typed = rng.random() < 0.6
    value_type = rng.choice(VALUE_TYPES[column])
    ref = Column(column, value_type if typed else None)
    roll = rng.random()
    if roll < 0.15:
        return IsNull(ref)
    if roll < 0.2 and column == "b":
        return ref
    if roll < 0.27:
        other = rng.choice([c for c in COLUMN_TYPES if c != column])
        other_type = rng.choice(VALUE_TYPES[other])
        literal = random_literal(rng, other, other_type)
        mismatched = Column(column, other_type if typed else None)
        return Comparison(rng.choice(OPS), mismatched, literal)  # type: ignore[arg-type]
    if not typed and rng.random() < 0.3 and column in ("dt", "pd", "ts", "i", "pi"):
        literal_value = random_value(rng, column)
        text = literal_value.isoformat(sep=" ") if column == "ts" else str(literal_value)
        literal = Literal(text, "string")
    else:
        literal = random_literal(rng, column, value_type)
    op = rng.choice(OPS)
    if rng.random() < 0.3:
        return Comparison(op, literal, ref)  # type: ignore[arg-type]
    return Comparison(op, ref, literal)  # type: ignore[arg-type]


def random_predicate(rng: random.Random, depth: int = 0) -> Expr:
    roll = rng.random()
    if depth >= 3 or roll < 0.4:
        return random_leaf_predicate(rng)
    if roll < 0.6:
        return Not(random_predicate(rng, depth + 1))
    children = tuple(random_predicate(rng, depth + 1) for _ in range(rng.randint(2, 3)))
    return And(children) if roll < 0.8 else Or(children)


def random_file(rng: random.Random) -> tuple[list[dict[str, Any]], dict[str, str | None]]:
    partition = {
        "pi": rng.choice([None, rng.randint(-4, 4)]),
        "pd": rng.choice([None, random_value(rng, "pd")]),
    }
    rows = []
    for _ in range(rng.randint(0, 4)):
        row: dict[str, Any] = {}
        for column in COLUMN_TYPES:
            if column in PARTITIONS:
                continue
            value = None if rng.random() < 0.2 else random_value(rng, column)
            if column == "st.x":
                row["st"] = None if rng.random() < 0.1 else {"x": value}
            else:
                row[column] = value
        row.update(partition)
        rows.append(row)
    partition_values = {
        "pi": "" if partition["pi"] is None else str(partition["pi"]),
        "pd": None if partition["pd"] is None else partition["pd"].isoformat(),
    }
    return rows, partition_values


def stat_value(column: str, value: Any, is_max: bool) -> Any:
    match column:
        case "s":
            return value[:32]
        case "dt":
            return value.isoformat()
        case "ts":
            truncated = value.replace(microsecond=value.microsecond // 1000 * 1000)
            return (
                truncated.strftime("%Y-%m-%dT%H:%M:%S.") + f"{truncated.microsecond // 1000:03d}Z"
            )
        case "f":
            return float(str(np.float32(value)))
        case "dec":
            return float(value)
    return value


def compute_stats(rng: random.Random, rows: list[dict[str, Any]]) -> str | None:
    if rng.random() < 0.1:
        return None
    mins: dict[str, Any] = {}
    maxs: dict[str, Any] = {}
    nulls: dict[str, Any] = {}
    for column in COLUMN_TYPES:
        if column in PARTITIONS or rng.random() < 0.1:
            continue
        if column == "st.x":
            values = [r["st"]["x"] if r["st"] is not None else None for r in rows]
        else:
            values = [r[column] for r in rows]
        present = [
            v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))
        ]
        key_min, key_max, key_null = mins, maxs, nulls
        name = column
        if column == "st.x":
            key_min, key_max, key_null = (
                mins.setdefault("st", {}),
                maxs.setdefault("st", {}),
                nulls.setdefault("st", {}),
            )
            name = "x"
        key_null[name] = sum(v is None for v in values)
        if present:
            key_min[name] = stat_value(column, min(present), False)
            key_max[name] = stat_value(column, max(present), True)
    return json.dumps(
        {"numRecords": len(rows), "minValues": mins, "maxValues": maxs, "nullCount": nulls}
    )


def files_table(
    rng: random.Random, files: list[tuple[list[dict[str, Any]], dict[str, str | None]]]
) -> pa.Table:
    """The files (FILE_SCHEMA) holding ``files``' rows, with stats as a writer makes them."""
    return pa.Table.from_pylist(
        [
            {
                "path": f"part-{i}.parquet",
                "partition_values": list(pv.items()),
                "stats": compute_stats(rng, rows),
            }
            for i, (rows, pv) in enumerate(files)
        ],
        schema=FILE_SCHEMA,
    )


def rows_table(files: list[tuple[list[dict[str, Any]], dict[str, str | None]]]) -> pa.Table:
    return pa.Table.from_pylist([r for rows, _ in files for r in rows], schema=ROW_SCHEMA)


def row_owners(files: list[tuple[list[dict[str, Any]], dict[str, str | None]]]) -> np.ndarray:
    """For each row of :func:`rows_table`, the index of its file."""
    return np.repeat(np.arange(len(files)), [len(rows) for rows, _ in files])
