"""The audit log page (``/console/audit``: filters, newest first, keyset pages) and its
exports (``/console/audit.csv``, ``/console/audit.jsonl``), streamed."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from deltaport.catalog.database.connection import Database, DatabaseUnavailableError
from deltaport.console.activity.audit_filters import OPERATIONS, Filters, read_filters
from deltaport.console.activity.export import csv_chunks, json_lines_chunks, records
from deltaport.observe.audit_filters import refusal
from deltaport.observe.audit_record import AuditRecord
from deltaport.observe.audit_store import AuditPage, read_page
from deltaport.protocol.echo import echo
from deltaport.protocol.errors import (
    InvalidParameterError,
    ResourceNotFoundError,
    TemporarilyUnavailableError,
)

PAGE_SIZE = 50
UNAVAILABLE = "the catalog database cannot be reached at the moment; retry later"
EXPORTS: dict[str, tuple[str, Callable[[Iterator[AuditRecord]], Iterator[bytes]]]] = {
    "csv": ("text/csv; charset=utf-8", csv_chunks),
    "jsonl": ("application/x-ndjson", json_lines_chunks),
}


Render = Callable[..., Response]
"""The console's page renderer (``console.render.page``), handed in by the console."""


class AuditLogPage:
    """Over the catalog database's audit records; None on a server without one (the page
    says the log needs a catalog database)."""

    def __init__(self, render: Render, database: Database | None) -> None:
        self._render = render
        self._database = database

    async def show(self, request: Request) -> Response:
        filters = read_filters(request.query_params)
        found: AuditPage | None = None
        status = 200
        if filters.where is None:
            status = 400
        elif self._database is not None:
            token = request.query_params.get("page_token") or None
            try:
                found = await run_in_threadpool(
                    read_page, self._database, filters.where, PAGE_SIZE, token
                )
            except DatabaseUnavailableError:
                raise TemporarilyUnavailableError(UNAVAILABLE) from None
            except ValueError as exc:  # a page token that is none
                raise InvalidParameterError(str(exc)) from None
        return self._render(
            request,
            "activity_audit.html",
            status=status,
            filters=filters,
            operations=OPERATIONS,
            found=found,
            has_log=self._database is not None,
        )

    async def export(self, request: Request) -> Response:
        kind = request.path_params["kind"]
        if kind not in EXPORTS:
            raise ResourceNotFoundError(f"no export {echo(kind)}: use csv or jsonl")
        filters = read_filters(request.query_params)
        if filters.where is None:
            raise InvalidParameterError(_refusal(filters))
        if self._database is None:
            raise InvalidParameterError("the audit log needs a catalog database")
        media_type, chunks = EXPORTS[kind]
        found = records(self._database, filters.where)
        try:  # the first page is read before the 200 is sent, so that a failure is a 503
            first = await run_in_threadpool(next, found, None)
        except DatabaseUnavailableError:
            raise TemporarilyUnavailableError(UNAVAILABLE) from None
        return StreamingResponse(
            chunks(_again(first, found)),
            media_type=media_type,
            headers={"content-disposition": f'attachment; filename="audit.{kind}"'},
        )


def _again(first: AuditRecord | None, rest: Iterator[AuditRecord]) -> Iterator[AuditRecord]:
    if first is not None:
        yield first
        yield from rest


def _refusal(filters: Filters) -> str:
    return refusal(filters.errors)
