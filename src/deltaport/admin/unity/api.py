"""The provider API in Unity Catalog's shape, put together: its routes behind the admin
token (the admin API's guard, answering errors as ``{"error_code", "message"}``), with the
catalog's refusals turned into their statuses as the admin API turns them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from deltaport.admin.catalog_api import catalog_errors
from deltaport.admin.unity.errors import no_databricks_config
from deltaport.admin.unity.recipients import RecipientsApi
from deltaport.admin.unity.shares import SharesApi
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.config.model import ServerConfig

Handler = Callable[[Request], Awaitable[Response]]
Guard = Callable[[Handler], Handler]


def unity_routes(
    store: SqlCatalog | None, config: ServerConfig, sharing_url: str, guard: Guard
) -> list[BaseRoute]:
    """The routes; only ``/.well-known/databricks-config`` without a catalog database."""

    def wrap(handler: Handler) -> Handler:
        return guard(catalog_errors(handler))

    routes: list[BaseRoute] = [
        Route("/.well-known/databricks-config", no_databricks_config, methods=["GET"])
    ]
    if store is not None:
        routes += SharesApi(store, config).routes(wrap)
        routes += RecipientsApi(store, sharing_url).routes(wrap)
    return routes
