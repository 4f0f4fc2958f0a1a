"""The shares, schemas and tables as configured, and the table pages: overview (version,
protocol, schema tree, properties, size), history, files, first rows and change feed. Each
page asks the resolver's provider side for its table, so a missing table, a version or
timestamp the log does not hold is refused as the sharing API refuses it."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from deltaport.admin.tables import ConfiguredTables, SchemaTables, TableRef
from deltaport.catalog.model import SharedTable
from deltaport.console import table_view
from deltaport.console.render import page
from deltaport.protocol.params import int_param
from deltaport.sharing import TableResolver

TABS = ("overview", "history", "files", "rows", "changes")
TABLES_PAGE = 100
"""Tables a page of the tables' list shows (a schema without tables counts as one)."""


class TablePages:
    def __init__(self, tables: ConfiguredTables, resolver: TableResolver) -> None:
        self.tables = tables
        self.resolver = resolver

    async def home(self, request: Request) -> Response:
        offset = max(0, int_param(request.query_params.get("offset"), "offset") or 0)
        groups = await run_in_threadpool(lambda: self.tables.groups)
        shown, total = page_of(groups, offset, TABLES_PAGE)
        return page(
            request, "home.html", groups=shown, offset=offset, page_size=TABLES_PAGE, total=total
        )

    def _table(self, request: Request) -> tuple[TableRef, SharedTable]:
        """The table as the page names it and as the resolver reads it."""
        name = request.path_params["name"]
        table = self.resolver.provider_table(self.tables.shared, name)
        return self.tables.named(name), table

    def _at(self, request: Request) -> tuple[int | None, str | None]:
        params = request.query_params
        return int_param(params.get("version"), "version"), params.get("timestamp") or None

    async def overview(self, request: Request) -> Response:
        ref, table = await run_in_threadpool(self._table, request)
        version, timestamp = self._at(request)
        snap = await run_in_threadpool(
            table_view.snapshot, self.resolver, table, version, timestamp
        )
        tree = await run_in_threadpool(table_view.schema_tree, snap)
        return self._tab(
            request, ref, "overview", snap=snap, tree=tree, version=version, timestamp=timestamp
        )

    async def history(self, request: Request) -> Response:
        ref, table = await run_in_threadpool(self._table, request)
        before = int_param(request.query_params.get("before"), "before")
        history = await run_in_threadpool(table_view.history_page, self.resolver, table, before)
        return self._tab(request, ref, "history", history=history)

    async def files(self, request: Request) -> Response:
        ref, table = await run_in_threadpool(self._table, request)
        version, timestamp = self._at(request)
        offset = max(0, int_param(request.query_params.get("offset"), "offset") or 0)
        snap = await run_in_threadpool(
            table_view.snapshot, self.resolver, table, version, timestamp
        )
        files = await run_in_threadpool(table_view.files_page, snap, offset)
        return self._tab(
            request,
            ref,
            "files",
            snap=snap,
            files=files,
            offset=offset,
            page_size=table_view.FILES_PAGE,
            version=version,
            timestamp=timestamp,
        )

    async def rows(self, request: Request) -> Response:
        ref, table = await run_in_threadpool(self._table, request)
        version, timestamp = self._at(request)
        snap = await run_in_threadpool(
            table_view.snapshot, self.resolver, table, version, timestamp
        )
        columns, rows = await run_in_threadpool(table_view.first_rows, self.resolver, table, snap)
        return self._tab(
            request,
            ref,
            "rows",
            snap=snap,
            columns=columns,
            rows=rows,
            version=version,
            timestamp=timestamp,
        )

    async def changes(self, request: Request) -> Response:
        ref, table = await run_in_threadpool(self._table, request)
        params = request.query_params
        start = int_param(params.get("start"), "start")
        end = int_param(params.get("end"), "end")
        changes = None
        if start is not None:
            changes = await run_in_threadpool(
                table_view.changes_page, self.resolver, table, start, end
            )
        return self._tab(request, ref, "changes", changes=changes, start=start, end=end)

    def _tab(self, request: Request, ref: TableRef, tab: str, **context: Any) -> Response:
        return page(request, f"table_{tab}.html", ref=ref, tab=tab, tabs=TABS, **context)


def page_of(
    groups: tuple[SchemaTables, ...], offset: int, size: int
) -> tuple[list[SchemaTables], int]:
    """The schemas holding the ``size`` tables from ``offset`` (a schema cut by the page's
    edge shows the part on it), and how many tables (and empty schemas) there are."""
    entries = [(g, ref) for g in groups for ref in (g.tables or (None,))]
    shown: list[SchemaTables] = []
    for group, ref in entries[offset : offset + size]:
        if not shown or shown[-1].share != group.share or shown[-1].schema != group.schema:
            shown.append(SchemaTables(group.share, group.schema, ()))
        if ref is not None:
            last = shown[-1]
            shown[-1] = SchemaTables(last.share, last.schema, (*last.tables, ref))
    return shown, len(entries)
