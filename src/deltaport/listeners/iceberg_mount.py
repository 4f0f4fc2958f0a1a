"""The Iceberg REST catalog mounted on the sharing listener, beside the Delta Sharing API:
both answer from the same catalog source and the same resolver, so a recipient sees the
same grants and the same sharing rules through each.
Its metadata no served version needs is swept away on a thread of its own."""

from __future__ import annotations

from starlette.applications import Starlette

from deltaport.config.model import ServerConfig
from deltaport.config.urls import iceberg_metadata_directory
from deltaport.iceberg.convert.tables import IcebergTables
from deltaport.iceberg.rest.operations import GET_OPENAPI, iceberg_document
from deltaport.iceberg.rest.routes import IcebergCatalog, before_routing_error
from deltaport.iceberg.rest.sweeper import IcebergSweeper
from deltaport.observe.audit_log import AuditLog
from deltaport.server.sources.catalog_source import CatalogSource
from deltaport.web.operation_routes import check_documented, document_route

SECONDS_PER_HOUR = 3600


def mount_iceberg(app: Starlette, config: ServerConfig, audit: AuditLog | None) -> None:
    """Add the catalog's routes and its OpenAPI document (``<iceberg.path>/openapi.json``) to
    the sharing listener's ``app`` (when enabled; ValueError when a route and the document
    do not name the same operations), and start its cleanup (when
    ``iceberg.cleanupIntervalMinutes`` is not 0)."""
    if not config.iceberg.enabled:
        return
    resolver = app.state.resolver
    tables = IcebergTables(iceberg_metadata_directory(config), resolver)
    catalog = IcebergCatalog(
        app.state.catalog, tables, app.state.limits, audit, app.state.credentials, resolver
    )
    base = config.iceberg.path.rstrip("/")
    document = iceberg_document(base)
    routes = [document_route(base + GET_OPENAPI.path, document), *catalog.routes(base)]
    check_documented(routes, {base: document})
    app.state.iceberg_openapi = document
    app.state.error_shapes.add(base, before_routing_error)
    app.router.routes.extend(routes)
    minutes = config.iceberg.cleanup_interval_minutes
    if minutes > 0:
        iceberg_sweeper(config, app.state.catalog, tables).start(minutes * 60)


def iceberg_sweeper(
    config: ServerConfig, source: CatalogSource, tables: IcebergTables | None = None
) -> IcebergSweeper:
    """The sweeper of the configuration's metadata directory, keeping files for
    ``iceberg.retainHours``."""
    if tables is None:
        tables = IcebergTables(iceberg_metadata_directory(config))
    return IcebergSweeper(
        source,
        tables,
        config.iceberg.retain_hours * SECONDS_PER_HOUR,
        lambda location: config.location_settings(location)[0],
    )
