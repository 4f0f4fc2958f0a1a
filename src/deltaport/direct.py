"""Reading Delta tables straight from storage, without a server: what ``deltaport table``
shows and reads."""

from __future__ import annotations

import datetime as dt
import itertools
import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from deltaport.delta import DeltaTable, Snapshot, open_table
from deltaport.protocol.schema import parse_schema, type_string
from deltaport.read import read_change_data, scan_snapshot, table_arrow_schema
from deltaport.read.scan import end_metadata

PREVIEW_ROWS = 20


def _snapshot(uri: str, version: int | None, timestamp: dt.datetime | None) -> Snapshot:
    table: DeltaTable = open_table(uri)
    return table.snapshot(version, timestamp=timestamp)


def _iso(millis: int) -> str:
    return dt.datetime.fromtimestamp(millis / 1000, dt.UTC).isoformat(timespec="milliseconds")


def describe_table(
    uri: str, *, version: int | None = None, timestamp: dt.datetime | None = None
) -> dict[str, Any]:
    """Version, protocol, features, schema, partitioning, file count, size and row count."""
    snap = _snapshot(uri, version, timestamp)
    meta = snap.metadata
    return {
        "location": snap.location.uri,
        "version": snap.version,
        "timestamp": _iso(snap.timestamp),
        "protocol": snap.protocol.to_json(),
        "id": meta.id,
        "name": meta.name,
        "description": meta.description,
        "schema": json.loads(meta.schema_string),
        "partition_columns": list(meta.partition_columns),
        "configuration": dict(meta.configuration),
        "num_files": snap.num_files,
        "size_in_bytes": snap.size_in_bytes,
        "num_records": snap.num_records,
    }


def format_description(info: dict[str, Any]) -> str:
    proto = info["protocol"]
    features = sorted(
        set(proto.get("readerFeatures") or []) | set(proto.get("writerFeatures") or [])
    )
    schema = parse_schema(json.dumps(info["schema"]))
    rows = info["num_records"]
    lines = [
        f"location:   {info['location']}",
        f"version:    {info['version']} ({info['timestamp']})",
        f"protocol:   reader {proto['minReaderVersion']}, writer {proto['minWriterVersion']}"
        + (f"; features: {', '.join(features)}" if features else ""),
        f"partitions: {', '.join(info['partition_columns']) or '(none)'}",
        f"files:      {info['num_files']} ({_human_size(info['size_in_bytes'])})",
        f"rows:       {rows if rows is not None else 'unknown (files without stats)'}",
        "schema:",
    ]
    lines += [f"  {f.name}: {type_string(f.type)}" for f in schema.fields]
    if info["configuration"]:
        lines.append("properties:")
        lines += [f"  {k} = {v}" for k, v in sorted(info["configuration"].items())]
    return "\n".join(lines)


def _human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def table_history(uri: str) -> list[dict[str, Any]]:
    """One entry per commit, newest first, as ``DESCRIBE HISTORY`` lists them."""
    entries = open_table(uri).history()
    return [
        {**dict(e.commit_info), "version": e.version, "timestamp": _iso(e.timestamp)}
        for e in reversed(entries)
    ]


def format_history(entries: list[dict[str, Any]]) -> str:
    lines = [f"{'version':>7}  {'timestamp':<29} operation"]
    for e in entries:
        params = e.get("operationParameters") or {}
        detail = ", ".join(f"{k}={v}" for k, v in params.items())
        op = e.get("operation", "")
        lines.append(
            f"{e['version']:>7}  {e['timestamp']:<29} {op}{f' ({detail})' if detail else ''}"
        )
    return "\n".join(lines)


def read_table_batches(
    uri: str,
    *,
    version: int | None = None,
    timestamp: dt.datetime | None = None,
    columns: Sequence[str] | None = None,
    limit: int | None = None,
) -> tuple[pa.Schema, Iterator[pa.RecordBatch]]:
    """The schema and a stream of record batches of a snapshot."""
    table = open_table(uri)
    snap = table.snapshot(version, timestamp=timestamp)
    schema = table_arrow_schema(snap.metadata, columns=columns)
    return schema, scan_snapshot(snap, table.storage, columns=columns, limit=limit)


def read_change_batches(
    uri: str, start: int, end: int | None = None
) -> tuple[pa.Schema, Iterator[pa.RecordBatch]]:
    """The schema and a stream of the change data feed of versions ``start..end``."""
    table = open_table(uri)
    changes = table.change_data(start, end)
    batches = read_change_data(changes, table.storage)
    first = next(batches, None)
    if first is None:
        return table_arrow_schema(end_metadata(changes), cdf=True), iter(())
    return first.schema, itertools.chain([first], batches)


def write_parquet(schema: pa.Schema, batches: Iterable[pa.RecordBatch], path: str) -> int:
    """Stream ``batches`` into one parquet file; returns the number of rows written."""
    rows = 0
    with pq.ParquetWriter(path, schema) as writer:
        for batch in batches:
            writer.write_batch(batch)
            rows += batch.num_rows
    return rows


def preview(schema: pa.Schema, batches: Iterable[pa.RecordBatch]) -> str:
    """The first rows as a text table, and how many rows there were in all."""
    head: list[pa.RecordBatch] = []
    total = 0
    for batch in batches:
        if total < PREVIEW_ROWS:
            head.append(batch.slice(0, PREVIEW_ROWS - total))
        total += batch.num_rows
    shown = pa.Table.from_batches(head, schema=schema)
    text = shown.to_pandas().to_string(index=False) if shown.num_rows else "(no rows)"
    more = f"\n... {total - shown.num_rows} more rows" if total > shown.num_rows else ""
    return f"{text}{more}\n({total} rows)"
