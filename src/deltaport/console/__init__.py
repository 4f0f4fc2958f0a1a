"""The web console: server-rendered pages on the admin listener (Jinja2 templates, htmx
and a stylesheet shipped in this package; no CDN, no inline scripts)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from deltaport.admin.diff_service import DiffService
from deltaport.admin.tables import ConfiguredTables
from deltaport.admin.tokens import AdminTokens
from deltaport.catalog.database.connection import Database
from deltaport.console.activity.audit_page import AuditLogPage
from deltaport.console.activity.overview import OverviewPage
from deltaport.console.auth import PREFIX, ConsoleAuth, Handler
from deltaport.console.diff_page import DiffPage
from deltaport.console.render import page
from deltaport.console.sessions import Sessions
from deltaport.console.table_pages import TablePages
from deltaport.web.failed_auth import FailedAuthLimit

__all__ = ["PREFIX", "console_routes"]

Guard = Callable[[Handler], Handler]

STATIC = Path(__file__).parent / "static"


def console_routes(
    tables: ConfiguredTables,
    diffs: DiffService,
    tokens: AdminTokens,
    sessions: Sessions,
    limit: FailedAuthLimit,
    database: Database | None = None,
    manage: Callable[[Guard], list[BaseRoute]] | None = None,
) -> list[BaseRoute]:
    """``database``: the catalog database the overview and the audit pages read;
    ``manage``: the management pages of a catalog server (``console.manage``), given the
    session check to put in front of each."""
    auth = ConsoleAuth(tokens, sessions, limit, manages=manage is not None)
    overview = OverviewPage(page, tables, database)
    audit = AuditLogPage(page, database)
    pages = TablePages(tables, diffs.resolver)
    diff = DiffPage(tables, diffs)
    signed_in = auth.required
    table = "/tables/{name}"

    async def to_console(_: object) -> Response:
        # a path, not a URL: never built from the Host header the request names
        return RedirectResponse(f"{PREFIX}/", status_code=303)

    routes: list[BaseRoute] = [
        Route("/", signed_in(overview.show), methods=["GET"]),
        Route("/tables", signed_in(pages.home), methods=["GET"]),
        Route("/audit", signed_in(audit.show), methods=["GET"]),
        Route("/audit.{kind}", signed_in(audit.export), methods=["GET"]),
        Route("/login", auth.login_form, methods=["GET"]),
        Route("/login", auth.login, methods=["POST"]),
        Route("/logout", signed_in(auth.logout), methods=["POST"]),
        Route(table, signed_in(pages.overview), methods=["GET"]),
        Route(f"{table}/history", signed_in(pages.history), methods=["GET"]),
        Route(f"{table}/files", signed_in(pages.files), methods=["GET"]),
        Route(f"{table}/rows", signed_in(pages.rows), methods=["GET"]),
        Route(f"{table}/changes", signed_in(pages.changes), methods=["GET"]),
        Route("/diff", signed_in(diff.show), methods=["GET"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    if manage is not None:
        routes += manage(signed_in)
    return [
        Route("/", to_console, methods=["GET"]),
        Route(PREFIX, to_console, methods=["GET"]),
        Mount(PREFIX, routes=routes),
    ]
