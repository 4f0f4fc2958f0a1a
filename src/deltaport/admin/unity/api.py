"""The provider API in Unity Catalog's shape, put together: its routes behind the admin
token (the admin API's guard, answering errors as ``{"error_code", "message"}``), the same
routes again under OpenSharing's provider prefix (the same handlers), and the public
activation routes, which take no token."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from deltaport.admin.unity.errors import (
    OPENSHARING_ACTIVATION,
    OPENSHARING_PREFIX,
    PREFIX,
    no_databricks_config,
    unity_error,
)
from deltaport.admin.unity.recipients import RecipientsApi
from deltaport.admin.unity.shares import SharesApi
from deltaport.catalog.provider.service import ProviderService
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.config.model import ServerConfig
from deltaport.config.urls import iceberg_endpoint_for
from deltaport.observe.audit_log import AuditLog
from deltaport.server.http.audited import SharingAudit, public_routes
from deltaport.server.oauth.activation import Activation
from deltaport.web.failed_auth import FailedAuthLimit

Handler = Callable[[Request], Awaitable[Response]]
Guard = Callable[[Handler], Handler]


def unity_routes(
    store: SqlCatalog | None,
    service: ProviderService | None,
    config: ServerConfig,
    sharing_url: str,
    guard: Guard,
    limit: FailedAuthLimit,
    audit: AuditLog | None = None,
) -> list[BaseRoute]:
    """The routes; only ``/.well-known/databricks-config`` without a catalog database.
    The provider's changes go through ``service``; ``store`` activates links.
    The activation routes take no admin token: each of their requests is recorded in
    ``audit`` as the sharing listener records them, and a link that opens nothing counts
    in the listener's failed-authentication ``limit``."""
    routes: list[BaseRoute] = [
        Route("/.well-known/databricks-config", no_databricks_config, methods=["GET"])
    ]
    if store is None or service is None:
        return routes
    shares = SharesApi(service, store.database)
    recipients = RecipientsApi(service, store.database, config.max_ip_access_list_entries)
    for prefix in (PREFIX, OPENSHARING_PREFIX):
        routes += shares.routes(guard, prefix) + recipients.routes(guard, prefix)
    activation = Activation(
        store,
        sharing_url,
        limit,
        unity_error,
        iceberg_for=lambda endpoint: iceberg_endpoint_for(endpoint, config),
    )
    public = [
        *activation.routes(),
        Route(OPENSHARING_ACTIVATION + "/{link}", activation.retrieve, methods=["GET"]),
    ]
    return routes + public_routes(public, SharingAudit(audit) if audit is not None else None)
