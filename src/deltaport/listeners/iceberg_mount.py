"""The Iceberg REST catalog mounted on the sharing listener, beside the Delta Sharing API:
both answer from the same catalog source, so a recipient sees the same grants through each."""

from __future__ import annotations

from starlette.applications import Starlette

from deltaport.config.model import ServerConfig
from deltaport.config.urls import iceberg_metadata_directory
from deltaport.iceberg.convert.tables import IcebergTables
from deltaport.iceberg.rest.openapi import add_catalog
from deltaport.iceberg.rest.routes import IcebergCatalog
from deltaport.observe.audit_log import AuditLog


def mount_iceberg(app: Starlette, config: ServerConfig, audit: AuditLog | None) -> None:
    """Add the catalog's routes to the sharing listener's ``app`` and to its OpenAPI
    document (when enabled)."""
    if not config.iceberg.enabled:
        return
    tables = IcebergTables(iceberg_metadata_directory(config))
    catalog = IcebergCatalog(
        app.state.catalog, tables, app.state.limits, audit, app.state.credentials
    )
    base = config.iceberg.path.rstrip("/")
    app.router.routes.extend(catalog.routes(base))
    add_catalog(app.state.openapi, base)
