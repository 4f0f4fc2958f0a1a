"""File skipping against the real stats of the corpus tables (Spark, delta-rs, kernel
writers): for comparisons with values taken from the data, no file holding a matching row
may be dropped.

Tables are replayed from their JSON commits only (tables whose log starts at a checkpoint
are left out) and read from their data files without column mapping.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from corpus import CorpusTable, corpus_tables
from deltaport.delta.model import FILE_SCHEMA
from deltaport.protocol.predicates import (
    Column,
    Comparison,
    Expr,
    IsNull,
    Literal,
    Not,
    evaluate_rows,
    file_mask,
)

OPS = ["equal", "lessThan", "lessThanOrEqual", "greaterThan", "greaterThanOrEqual"]
MAX_FILES = 200
WRONG_STATS = {
    # a delta-rs bug reproduction: its second file's minValues.timestamp is later than
    # the file's real minimum, so no stats-trusting reader can skip correctly
    "drs__issue_1374",
}


def _candidates() -> list[CorpusTable]:
    return [
        t
        for t in corpus_tables()
        if "stats" in t.tags
        and not t.negative
        and not t.data_missing
        and t.name not in WRONG_STATS
        and (t.path / "_delta_log" / "00000000000000000000.json").exists()
    ]


def _replay(root: Path) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    metadata: dict[str, Any] = {}
    adds: dict[str, dict[str, Any]] = {}
    commits = sorted((root / "_delta_log").glob("[0-9]" * 20 + ".json"))
    for version, commit in enumerate(commits):
        if commit.name != f"{version:020d}.json":
            return None
        for line in commit.read_text().splitlines():
            if not line.strip():
                continue
            action = json.loads(line)
            if "metaData" in action:
                metadata = action["metaData"]
            elif "add" in action:
                adds[action["add"]["path"]] = action["add"]
            elif "remove" in action:
                adds.pop(action["remove"]["path"], None)
    if (
        not metadata
        or metadata.get("configuration", {}).get("delta.columnMapping.mode", "none") != "none"
    ):
        return None
    return metadata, list(adds.values())[:MAX_FILES]


def _column_types(schema: dict[str, Any], prefix: str = "") -> dict[str, str]:
    types: dict[str, str] = {}
    for field in schema["fields"]:
        name = prefix + field["name"]
        if isinstance(field["type"], str):
            types[name] = field["type"]
        elif field["type"].get("type") == "struct":
            types.update(_column_types(field["type"], name + "."))
    return types


def _literal(value: Any) -> Literal | None:
    match value:
        case bool():
            return Literal(value, "bool")
        case int():
            return Literal(value, "long")
        case float() if math.isfinite(value):
            return Literal(Decimal(repr(value)), "double")
        case Decimal() if value.is_finite():
            return Literal(value, "double")
        case str():
            return Literal(value, "string")
        case dt.datetime() if value.tzinfo is not None:
            return Literal(value, "timestamp")
        case dt.datetime():
            return Literal(value.isoformat(sep=" "), "string")
        case dt.date():
            return Literal(value, "date")
    return None


def _predicates(rows: pa.Table, column_types: dict[str, str], partitions: set[str]) -> list[Expr]:
    predicates: list[Expr] = []
    for name in column_types:
        if name in partitions:
            continue
        head, *rest = name.split(".")
        if head not in rows.column_names:
            continue
        values = rows.column(head).combine_chunks()
        try:
            for field in rest:
                values = pa.compute.struct_field(values, field)
        except (pa.ArrowException, KeyError):
            continue
        present = values.drop_null()
        predicates.append(IsNull(Column(name)))
        if len(present) == 0:
            continue
        picks = {repr(v): v for v in (present[0], present[len(present) // 2], present[-1])}
        for value in picks.values():
            literal = _literal(value.as_py())
            if literal is None:
                continue
            for op in OPS:
                comparison = Comparison(op, Column(name), literal)  # type: ignore[arg-type]
                predicates += [comparison, Not(comparison)]
    return predicates


@pytest.mark.parametrize("table", _candidates(), ids=lambda t: t.name)
def test_corpus_files_with_matching_rows_are_kept(table: CorpusTable) -> None:
    replayed = _replay(table.path)
    if replayed is None:
        pytest.skip("log does not replay from JSON commits alone, or uses column mapping")
    metadata, adds = replayed
    column_types = _column_types(json.loads(metadata["schemaString"]))
    partitions = set(metadata.get("partitionColumns") or [])
    try:
        parts = [
            pq.read_table(table.path / unquote(add["path"]), coerce_int96_timestamp_unit="us")
            for add in adds
        ]
        rows = pa.concat_tables(parts, promote_options="permissive")
    except (pa.ArrowException, OSError) as exc:
        pytest.skip(f"data files do not read as one table: {exc}")
    owners = np.repeat(np.arange(len(parts)), [p.num_rows for p in parts])
    files = pa.Table.from_pylist(
        [
            {
                "path": a["path"],
                "partition_values": list(a["partitionValues"].items()),
                "stats": a.get("stats"),
            }
            for a in adds
        ],
        schema=FILE_SCHEMA,
    )
    for predicate in _predicates(rows, column_types, partitions):
        mask = np.asarray(file_mask(predicate, files, column_types, partitions))
        matches = np.asarray(evaluate_rows(predicate, rows), dtype=bool)
        holders = np.unique(owners[matches])
        missed = holders[~mask[holders]].tolist()
        assert not missed, (predicate, [adds[i].get("stats") for i in missed])
