"""The diff page: the form (two locations, two configured tables, or one table at two
versions) and the commit diff and row diff of :class:`deltaport.admin.DiffService`."""

from __future__ import annotations

import dataclasses
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from deltaport.admin.api import diff_request
from deltaport.admin.diff_service import DiffService
from deltaport.admin.errors import as_sharing_error
from deltaport.admin.tables import ConfiguredTables
from deltaport.console.render import page


class DiffPage:
    def __init__(self, tables: ConfiguredTables, diffs: DiffService) -> None:
        self.tables = tables
        self.diffs = diffs

    async def show(self, request: Request) -> Response:
        params = request.query_params
        names = [ref.label for group in self.tables.groups for ref in group.tables]
        context: dict[str, Any] = {
            "form": dict(params),
            "table_names": names,
            "commits": None,
            "rows": None,
            "error": None,
        }
        status = 200
        if params.get("left") or params.get("right"):
            try:
                query = diff_request(params)
                context["commits"] = await self.diffs.within_time(self.diffs.commits, query)
                if query.rows or query.key:
                    rows_query = dataclasses.replace(
                        query,
                        rows=True,
                        page_token=params.get("rows_page_token") or None,
                        limit=None,
                    )
                    context["rows"] = await self.diffs.within_time(self.diffs.rows, rows_query)
            except Exception as exc:
                error = as_sharing_error(exc)
                if error is None:
                    raise
                context["error"] = error.message
                status = error.status
        return page(request, "diff.html", status=status, **context)
