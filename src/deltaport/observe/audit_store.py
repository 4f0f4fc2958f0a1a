"""Audit records in the catalog database (table ``audit_records``, schema versions 5 and 10):
written in batches, read a page at a time newest first, summed by the stretch of time
(for the console's overview), removed once past retention.

Pages are keyset pages over ``(time_ms, id)``: each page starts where the last one ended,
through an index (by time, or by recipient or table then time), so the millionth record
costs as much to page to as the first. Names are stored and compared case-folded, as
Delta Sharing's names are case-insensitive.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import json
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from deltaport.catalog.database.connection import Database, Row
from deltaport.observe.audit_record import AuditRecord

DEFAULT_PAGE_SIZE = 100
ERROR_STATUS = 400
"""Records of this status and up are errors (a client's 4xx as a server's 5xx)."""
MAX_PAGE_SIZE = 1000
_COLUMNS = (
    "id",
    "time_ms",
    "operation",
    "status",
    "duration_ms",
    "recipient",
    "admin",
    "client_address",
    "user_agent",
    "share",
    "table_name",
    "target",
    "version",
    "end_version",
    "files",
    "bytes",
    "error_code",
    "request_count",
)
_INSERT = (
    f"INSERT INTO audit_records ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' for _ in _COLUMNS)})"
    " ON CONFLICT (id) DO NOTHING"
)
_LARGEST = 2**63 - 1
"""What a BIGINT holds: a page token past it is none (it was a 500)."""
_ID_LENGTH = 64
_sequence = itertools.count()
_sequence_lock = threading.Lock()
_process = os.urandom(4).hex()


def new_id(time_ms: int) -> str:
    """An id that sorts after every earlier id of this process at the same millisecond
    (a counter), and differs from every other process's (a random part)."""
    with _sequence_lock:
        n = next(_sequence)
    return f"{time_ms:013x}{n:010x}{_process}"


@dataclass(frozen=True)
class AuditFilter:
    """Which records a page holds; None matches anything. ``since`` is inclusive,
    ``until`` exclusive (milliseconds since the epoch)."""

    recipient: str | None = None
    table: str | None = None
    operation: str | None = None
    status: int | None = None
    since: int | None = None
    until: int | None = None


@dataclass(frozen=True)
class AuditPage:
    records: list[AuditRecord]
    next_page_token: str | None


def write(database: Database, records: Sequence[AuditRecord]) -> None:
    """Insert ``records`` in one transaction. A record whose id the table has already is
    skipped: a batch written again after its commit reached the database but the answer
    did not reach the writer is kept once, and does not hold up the records behind it."""
    with database.transaction() as tx:
        tx.execute_many(_INSERT, [_row(r) for r in records])


def remove_before(database: Database, time_ms: int) -> int:
    """Remove the records older than ``time_ms``; returns how many there were."""
    with database.transaction() as tx:
        found = tx.execute("SELECT COUNT(*) FROM audit_records WHERE time_ms < ?", (time_ms,))
        tx.execute("DELETE FROM audit_records WHERE time_ms < ?", (time_ms,))
    return int(found[0][0])


def read_page(
    database: Database,
    where: AuditFilter,
    limit: int | None = None,
    page_token: str | None = None,
) -> AuditPage:
    """The newest ``limit`` records matching ``where``, after ``page_token`` (the
    ``next_page_token`` of the previous page); a :class:`ValueError` for a bad limit or
    token."""
    size = DEFAULT_PAGE_SIZE if limit is None or limit == 0 else limit
    if not 1 <= size <= MAX_PAGE_SIZE:
        raise ValueError(f"limit: must be between 1 and {MAX_PAGE_SIZE}, got {limit}")
    clauses: list[str] = []
    params: list[Any] = []
    for column, value in (
        ("recipient", _folded(where.recipient)),
        ("table_name", _folded(where.table)),
        ("operation", where.operation),
        ("status", where.status),
    ):
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(value)
    if where.since is not None:
        clauses.append("time_ms >= ?")
        params.append(where.since)
    if where.until is not None:
        clauses.append("time_ms < ?")
        params.append(where.until)
    if page_token:
        time_ms, last_id = _decode_token(page_token)
        clauses.append("(time_ms < ? OR (time_ms = ? AND id < ?))")
        params += [time_ms, time_ms, last_id]
    sql = f"SELECT {', '.join(_COLUMNS)} FROM audit_records"
    if clauses:
        sql += " WHERE " + " AND ".join(clauses)
    sql += " ORDER BY time_ms DESC, id DESC LIMIT ?"
    rows = database.query(sql, (*params, size + 1))
    records = [_record(row) for row in rows[:size]]
    more = len(rows) > size
    token = _encode_token(records[-1]) if more else None
    return AuditPage(records, token)


@dataclass(frozen=True)
class Volume:
    """What a stretch of time held: requests, bytes answered, errors (status 400 and up)."""

    requests: int = 0
    bytes: int = 0
    errors: int = 0


def volume(database: Database, since: int, until: int, bucket_ms: int) -> list[Volume]:
    """The records of ``[since, until)`` summed in buckets of ``bucket_ms`` from ``since``
    on (the oldest first), read from the index ``audit_records_volume`` alone."""
    rows = database.query(
        "SELECT (time_ms - ?) / ? AS bucket, COUNT(*), SUM(bytes), "
        f"SUM(CASE WHEN status >= {ERROR_STATUS} THEN 1 ELSE 0 END) "
        "FROM audit_records WHERE time_ms >= ? AND time_ms < ? GROUP BY bucket",
        (since, bucket_ms, since, until),
    )
    buckets = [Volume() for _ in range(-(-(until - since) // bucket_ms))]
    for bucket, requests, size, errors in rows:
        buckets[int(bucket)] = Volume(int(requests), int(size or 0), int(errors or 0))
    return buckets


def newest_errors(database: Database, limit: int) -> list[AuditRecord]:
    """The ``limit`` newest records with a status of 400 and up (index
    ``audit_records_errors``)."""
    rows = database.query(
        f"SELECT {', '.join(_COLUMNS)} FROM audit_records WHERE status >= {ERROR_STATUS} "
        "ORDER BY time_ms DESC, id DESC LIMIT ?",
        (limit,),
    )
    return [_record(row) for row in rows]


def _folded(name: str | None) -> str | None:
    return name.casefold() if name is not None else None


def _row(record: AuditRecord) -> tuple[Any, ...]:
    return (
        record.id or new_id(record.time_ms),
        record.time_ms,
        record.operation,
        record.status,
        record.duration_ms,
        _folded(record.recipient),
        record.admin,
        record.client_address,
        record.user_agent,
        _folded(record.share),
        _folded(record.table),
        _folded(record.target),
        record.version,
        record.end_version,
        record.files,
        record.bytes,
        record.error_code,
        record.count,
    )


def _record(row: Row) -> AuditRecord:
    values = dict(zip(_COLUMNS, row, strict=True))
    values["table"] = values.pop("table_name")
    values["count"] = values.pop("request_count")
    return AuditRecord(**values)


def _encode_token(last: AuditRecord) -> str:
    raw = json.dumps([last.time_ms, last.id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_token(token: str) -> tuple[int, str]:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        time_ms, last_id = json.loads(raw)
        if (
            type(time_ms) is int
            and -_LARGEST <= time_ms <= _LARGEST
            and isinstance(last_id, str)
            and len(last_id) <= _ID_LENGTH
        ):
            return time_ms, last_id
    except (binascii.Error, ValueError, TypeError):
        pass
    raise ValueError("page_token: not a page token of the audit log")
