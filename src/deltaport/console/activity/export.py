"""The filtered audit log as a download, CSV or JSON lines, made a page of records at a
time as the answer is sent (never the whole log in memory): each page is a keyset page of
the store's, so records written meanwhile neither repeat nor shift it."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Iterator

from deltaport.catalog.database.connection import Database
from deltaport.observe.audit_record import AuditRecord, as_json
from deltaport.observe.audit_store import MAX_PAGE_SIZE, AuditFilter, read_page

CSV_COLUMNS = (
    "time",
    "id",
    "operation",
    "status",
    "errorCode",
    "durationMs",
    "recipient",
    "admin",
    "clientAddress",
    "userAgent",
    "share",
    "table",
    "target",
    "version",
    "endVersion",
    "files",
    "bytes",
)
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""A text cell starting with one of these would be a formula to a spreadsheet (a user agent
is the client's to choose): it is written after a ``'``."""


def records(database: Database, where: AuditFilter) -> Iterator[AuditRecord]:
    """Every record matching ``where``, newest first, read :data:`MAX_PAGE_SIZE` at a time."""
    token: str | None = None
    while True:
        page = read_page(database, where, MAX_PAGE_SIZE, token)
        yield from page.records
        token = page.next_page_token
        if token is None:
            return


def csv_chunks(found: Iterator[AuditRecord]) -> Iterator[bytes]:
    """A header line, then one line a record (UTF-8, RFC 4180 quoting), a chunk per page."""
    return _chunks(found, _csv_line, _csv_text(CSV_COLUMNS))


def json_lines_chunks(found: Iterator[AuditRecord]) -> Iterator[bytes]:
    """One JSON object a line, as ``GET /api/audit`` answers each record."""
    return _chunks(found, lambda r: json.dumps(as_json(r), ensure_ascii=False) + "\n", "")


def _chunks(
    found: Iterator[AuditRecord], line: Callable[[AuditRecord], str], first: str
) -> Iterator[bytes]:
    buffer = [first]
    for n, record in enumerate(found, 1):
        buffer.append(line(record))
        if n % MAX_PAGE_SIZE == 0:
            yield "".join(buffer).encode()
            buffer = []
    if buffer:
        yield "".join(buffer).encode()


def _csv_line(record: AuditRecord) -> str:
    fields = as_json(record)
    return _csv_text(fields.get(column) for column in CSV_COLUMNS)


def _csv_text(values: Iterable[object]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerow([_cell(v) for v in values])
    return out.getvalue()


def _cell(value: object) -> str:
    if value is None:
        return ""
    text = str(value)
    if isinstance(value, str) and text.startswith(FORMULA_STARTS):
        return "'" + text
    return text
