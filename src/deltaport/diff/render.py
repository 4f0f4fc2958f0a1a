"""A TableDiff as JSON (shaped like the lakeFS differ's response) and as readable text."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from deltaport.delta.model import Protocol
from deltaport.diff.base.model import DiffEntry, SideSummary, TableDiff
from deltaport.text.wording import count


def to_json(result: TableDiff) -> dict[str, Any]:
    return {
        "table_diff_type": result.table_diff_type.value,
        "table_format": result.table_format,
        "results": [_entry_json(e) for e in result.results],
        "base_version": result.base_version,
        "left": {
            "uri": result.left_uri,
            "version": result.left_version,
            "summary": _summary_json(result.left),
        },
        "right": {
            "uri": result.right_uri,
            "version": result.right_version,
            "summary": _summary_json(result.right),
        },
        "notes": list(result.notes),
        "next_page_token": result.next_page_token,
        "metrics": {
            "log_entries_read": result.metrics.log_entries_read,
            "run_time_ms": round(result.metrics.run_time_ms, 3),
        },
    }


def _entry_json(entry: DiffEntry) -> dict[str, Any]:
    return {
        "id": str(entry.id),
        "timestamp": entry.timestamp,
        "operation": entry.operation,
        "operation_type": entry.operation_type.value,
        "operation_content": dict(entry.operation_content),
    }


def _summary_json(summary: SideSummary | None) -> dict[str, Any] | None:
    if summary is None:
        return None
    change = summary.protocol_change
    return {
        "commits": summary.commits,
        "first_version": summary.first_version,
        "last_version": summary.last_version,
        "files_added": summary.files_added,
        "files_removed": summary.files_removed,
        "rows_added": summary.rows_added,
        "rows_removed": summary.rows_removed,
        "rows_removed_by_deletion_vectors": summary.rows_removed_by_deletion_vectors,
        "net_rows": summary.net_rows,
        "files_without_row_counts": summary.files_without_row_counts,
        "schema_changes": [
            {"kind": c.kind, "column": c.column, "before": c.before, "after": c.after}
            for c in summary.schema_changes
        ],
        "property_changes": [
            {"key": p.key, "before": p.before, "after": p.after} for p in summary.property_changes
        ],
        "protocol_change": None
        if change is None
        else {
            "before": change.before.to_json() if change.before else None,
            "after": change.after.to_json(),
        },
    }


def render_text(result: TableDiff) -> str:
    lines = [
        f"{result.table_format} diff {result.left_uri}..{result.right_uri}: "
        f"{result.table_diff_type.value}",
        f"  left version {_opt(result.left_version)}, right version "
        f"{_opt(result.right_version)}, base version {_opt(result.base_version)}",
    ]
    lines += [f"  note: {n}" for n in result.notes]
    for side, summary in (("left", result.left), ("right", result.right)):
        if summary is not None and summary.commits:
            lines += _summary_text(side, summary)
    if result.results:
        lines.append("")
        lines.append(f"{count(len(result.results), 'commit')}, newest first:")
        lines += [_entry_text(e) for e in result.results]
    if result.next_page_token:
        lines.append(f"more commits: --page-token {result.next_page_token}")
    lines.append(
        f"({result.metrics.log_entries_read} log entries read in "
        f"{result.metrics.run_time_ms:.0f} ms)"
    )
    return "\n".join(lines) + "\n"


def _summary_text(side: str, s: SideSummary) -> list[str]:
    lines = [
        "",
        f"{side} only: {count(s.commits, 'commit')} (versions {s.first_version}..{s.last_version})",
        f"  files +{s.files_added} -{s.files_removed}; rows +{s.rows_added} "
        f"-{s.rows_removed} (net {s.net_rows:+d}"
        + (
            f", {s.rows_removed_by_deletion_vectors} by deletion vectors"
            if s.rows_removed_by_deletion_vectors
            else ""
        )
        + ")",
    ]
    if s.files_without_row_counts:
        lines.append(f"  {count(s.files_without_row_counts, 'file')} without row counts in stats")
    for c in s.schema_changes:
        if c.kind == "renamed":
            lines.append(f"  column renamed: {c.before} -> {c.after}")
        elif c.kind == "type_changed":
            lines.append(f"  column type changed: {c.column} {c.before} -> {c.after}")
        else:
            lines.append(f"  column {c.kind}: {c.column} {c.after or c.before}")
    for p in s.property_changes:
        if p.after is None:
            lines.append(f"  property unset: {p.key} (was {p.before})")
        else:
            lines.append(f"  property set: {p.key}={p.after}" + _was(p.before))
    if s.protocol_change is not None:
        lines.append(
            f"  protocol: {_protocol_text(s.protocol_change.before)} -> "
            f"{_protocol_text(s.protocol_change.after)}"
        )
    return lines


def _entry_text(entry: DiffEntry) -> str:
    when = datetime.fromtimestamp(entry.timestamp / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S")
    params = entry.operation_content.get("operation_parameters") or {}
    detail = ", ".join(f"{k}={v}" for k, v in params.items())
    text = f"  v{entry.id}  {when}Z  {entry.operation} [{entry.operation_type.value}]"
    return f"{text}  {detail}" if detail else text


def _protocol_text(protocol: Protocol | None) -> str:
    if protocol is None:
        return "none"
    text = f"reader {protocol.min_reader_version} / writer {protocol.min_writer_version}"
    features = sorted(set(protocol.reader_features or ()) | set(protocol.writer_features or ()))
    return f"{text} [{', '.join(features)}]" if features else text


def _was(before: str | None) -> str:
    return "" if before is None else f" (was {before})"


def _opt(value: int | None) -> str:
    return "-" if value is None else str(value)
