"""A row diff written out: a table on the terminal, JSON lines, or a Parquet file or Delta
table of every change."""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import asdict
from pathlib import Path
from typing import Any

import msgspec
import pyarrow as pa
import pyarrow.parquet as pq

from deltaport.diff.rows.row_diff import RowChange, RowDiff
from deltaport.protocol.schema import from_arrow_schema, schema_to_json

_CELL = 40


def rows_json_lines(diff: RowDiff) -> str:
    """The summary as the first line, then one line per change of the page, then (when
    there are more) ``{"nextPageToken": ...}``."""
    lines = [msgspec.json.encode(asdict(diff.summary))]
    lines += [msgspec.json.encode(asdict(change)) for change in diff.page()]
    if diff.next_page_token:
        lines.append(msgspec.json.encode({"nextPageToken": diff.next_page_token}))
    return b"\n".join(lines).decode() + "\n"


def rows_text(diff: RowDiff) -> str:
    s = diff.summary
    out = [
        f"left  version {s.left_version}   right version {s.right_version}   "
        f"base version {'none' if s.base_version is None else s.base_version}",
        f"key   {', '.join(s.key) if s.key else '(whole rows)'}",
        f"{s.inserted} inserted, {s.deleted} deleted, {s.updated} updated "
        f"(files read: {s.files_read_left} left, {s.files_read_right} right)",
    ]
    if s.columns_only_left:
        out.append(f"columns only on the left (not compared): {', '.join(s.columns_only_left)}")
    if s.columns_only_right:
        out.append(f"columns only on the right (not compared): {', '.join(s.columns_only_right)}")
    for change in s.type_changes:
        out.append(
            f"column {change.column}: {change.left_type} on the left, {change.right_type} "
            "on the right (compared in the wider type)"
        )
    out += [f"note: {note}" for note in s.notes]
    page = diff.page()
    if page:
        out.append("")
        out += _table(page)
    if diff.next_page_token:
        out += ["", f"more changes: --page-token {diff.next_page_token}"]
    return "\n".join(out) + "\n"


def _table(changes: list[RowChange]) -> list[str]:
    rows = [("change", "key", "column", "left", "right")]
    for change in changes:
        key = _cell(change.key) if change.key is not None else ""
        if change.change == "updated":
            assert change.left is not None and change.right is not None
            for i, column in enumerate(change.changed):
                rows.append(
                    (
                        "updated" if i == 0 else "",
                        key if i == 0 else "",
                        column,
                        _cell(change.left[column]),
                        _cell(change.right[column]),
                    )
                )
        else:
            row = change.left if change.change == "deleted" else change.right
            left = _cell(row) if change.change == "deleted" else ""
            right = _cell(row) if change.change == "inserted" else ""
            rows.append((change.change, key, "", left, right))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def _cell(value: Any) -> str:
    text = (
        json.dumps(value, default=str, ensure_ascii=False) if not isinstance(value, str) else value
    )
    return text if len(text) <= _CELL else text[: _CELL - 1] + "…"


def write_changes(diff: RowDiff, output: str) -> int:
    """Every change (not only the page) to ``output``: a Parquet file when it ends with
    ``.parquet``, else a new Delta table at that directory. Returns the rows written."""
    changes = diff.changes
    rows: int = changes.num_rows
    if output.endswith(".parquet"):
        pq.write_table(changes, output)
    else:
        _write_delta(changes, Path(output))
    return rows


def _write_delta(table: pa.Table, root: Path) -> None:
    """A one-version Delta table holding ``table`` in one Parquet file."""
    log = root / "_delta_log"
    if log.exists():
        raise FileExistsError(f"{root} already holds a Delta table; choose a new directory")
    log.mkdir(parents=True)
    name = f"part-00000-{uuid.uuid4()}.parquet"
    pq.write_table(table, root / name)
    now = int(time.time() * 1000)
    actions = [
        {"commitInfo": {"timestamp": now, "operation": "WRITE", "engineInfo": "deltaport diff"}},
        {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
        {
            "metaData": {
                "id": str(uuid.uuid4()),
                "format": {"provider": "parquet", "options": {}},
                "schemaString": schema_to_json(from_arrow_schema(table.schema)),
                "partitionColumns": [],
                "configuration": {},
                "createdTime": now,
            }
        },
        {
            "add": {
                "path": name,
                "partitionValues": {},
                "size": (root / name).stat().st_size,
                "modificationTime": now,
                "dataChange": True,
                "stats": json.dumps({"numRecords": table.num_rows}),
            }
        },
    ]
    text = "\n".join(json.dumps(a) for a in actions) + "\n"
    (log / f"{0:020d}.json").write_text(text, encoding="utf-8")
