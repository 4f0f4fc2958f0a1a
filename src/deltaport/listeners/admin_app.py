"""The admin listener's ASGI app: the admin API under ``/api`` and the console under
``/console``, with security headers on every response and the sharing listener's bound on
request bodies (``maxRequestBodyBytes``)."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response

from deltaport.admin.api import AdminApi, error_json
from deltaport.admin.audit_api import AdminAudit, AuditApi, Guard
from deltaport.admin.catalog_api import CatalogApi, provider_service
from deltaport.admin.diff_service import DiffService
from deltaport.admin.errors import as_sharing_error
from deltaport.admin.headers import SecurityHeaders
from deltaport.admin.metrics_api import metrics_routes
from deltaport.admin.openapi.document import ALWAYS_SERVED, WITH_CATALOG, admin_openapi
from deltaport.admin.tables import ConfiguredTables
from deltaport.admin.tokens import AdminTokens
from deltaport.admin.unity.api import unity_routes
from deltaport.admin.unity.errors import in_unity_shape, unity_error, unity_error_shapes
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.config.model import ServerConfig
from deltaport.config.urls import catalog_url, public_url
from deltaport.console import console_routes
from deltaport.console.manage.routes import manage_routes
from deltaport.console.render import page
from deltaport.console.sessions import Sessions
from deltaport.delta.errors import DeltaError
from deltaport.diff.base.errors import DiffError
from deltaport.observe.audit_log import AuditLog
from deltaport.observe.health import Readiness
from deltaport.protocol.echo import echo
from deltaport.protocol.errors import (
    InternalError,
    MethodNotAllowedError,
    ResourceNotFoundError,
    SharingError,
)
from deltaport.protocol.predicates import PredicateError
from deltaport.sharing import TableRefusal, TableResolver
from deltaport.storage import StorageError
from deltaport.web.body_limit import BodyLimit
from deltaport.web.client_address import ClientAddresses
from deltaport.web.failed_auth import FailedAuthLimit
from deltaport.web.header_limit import HeaderLimit, PathLimit
from deltaport.web.health import health_routes
from deltaport.web.hsts import StrictTransport
from deltaport.web.operation_routes import check_documented
from deltaport.web.request_metrics import RequestMetrics

log = logging.getLogger(__name__)


def create_admin_app(
    config: ServerConfig,
    readiness: Readiness | None = None,
    audit: AuditLog | None = None,
    refresh: Callable[[], None] | None = None,
) -> Starlette:
    """The admin app of ``config`` (which must have an ``admin`` section); ``readiness``
    is the process's (the sharing listener's), for ``/readyz``; each catalog request is
    recorded in ``audit``; ``refresh`` reloads the sharing listener's live catalog (called
    after each change made in the console)."""
    admin = config.admin
    if admin is None:
        raise ValueError("the configuration has no admin section")
    tokens = AdminTokens(admin.tokens)
    database = catalog_url(config)
    catalog = SqlCatalog(database, create=False) if database is not None else None
    tables = ConfiguredTables(config, catalog)
    diffs = DiffService(
        tables, TableResolver(budget_bytes=config.snapshot_cache_bytes), admin.diff_timeout_seconds
    )
    sessions = Sessions(tokens, admin.session_seconds)
    limit = FailedAuthLimit(admin.failed_auth_limit, admin.failed_auth_window_seconds)
    api = AdminApi(tokens, diffs, limit)
    handled: list[type[Exception]] = [
        SharingError,
        DeltaError,
        DiffError,
        StorageError,
        PredicateError,
        TableRefusal,
        ValueError,
    ]
    sharing_url = public_url(config) + config.endpoint
    manage = None
    service = None
    if catalog is not None:
        service = provider_service(catalog, config, sharing_url)
        manage = functools.partial(
            manage_routes, service, catalog.database, config, audit, tokens, refresh
        )
    routes = [*api.routes(), *metrics_routes(api.guard), *health_routes(readiness or Readiness())]
    audited = AdminAudit(audit, tokens).audited
    documented = ALWAYS_SERVED
    if catalog is not None and service is not None:
        guard = audited(api.guard)
        routes += CatalogApi(service).routes(guard)
        routes += AuditApi(catalog.database).routes(guard)
        documented += WITH_CATALOG
    routes += unity_routes(
        catalog, service, config, sharing_url, audited(_unity_guard(api)), limit, audit
    )
    check_documented(routes, {"/": admin_openapi(documented)})
    catalog_database = catalog.database if catalog is not None else None
    routes += console_routes(tables, diffs, tokens, sessions, limit, catalog_database, manage)
    error_shapes = unity_error_shapes()
    app = Starlette(
        routes=routes,
        middleware=[
            Middleware(RequestMetrics, listener="admin"),
            Middleware(ClientAddresses, trusted_proxies=config.trusted_proxies),
            Middleware(PathLimit, shape=error_shapes),
            Middleware(HeaderLimit),
            Middleware(StrictTransport),
            Middleware(SecurityHeaders),
            Middleware(BodyLimit, limit=config.max_request_body_bytes, shape=error_shapes),
        ],
        exception_handlers={
            HTTPException: _http_error,
            **{kind: _engine_error for kind in handled},
        },
    )
    app.router.redirect_slashes = False
    return app


def _unity_guard(api: AdminApi) -> Guard:
    """The admin token's guard, answering errors in Unity Catalog's shape."""
    return lambda handler: api.guard(handler, unity_error)


def _answer(request: Request, error: SharingError) -> Response:
    if in_unity_shape(request.url.path):
        return unity_error(error)
    if request.url.path.startswith("/api/"):
        return error_json(error)
    return page(request, "error.html", status=error.status, error=error)


async def _http_error(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    if status == 404:
        return _answer(request, ResourceNotFoundError(f"no page at {echo(request.url.path)}"))
    if status == 405:
        return _answer(request, MethodNotAllowedError(f"{request.method} is not allowed here"))
    return _answer(request, InternalError())


async def _engine_error(request: Request, exc: Exception) -> Response:
    error = as_sharing_error(exc)
    if error is None:
        log.error("unexpected error on %s", echo(request.url.path), exc_info=exc)
        error = InternalError()
    return _answer(request, error)
