"""The one table of audited routes: each route handler of either listener, by its qualified
name (``Class.method``), and the operation its records carry.

A route that is audited looks its handler up here when the app is built, so a server with a
handler missing from the table refuses to start (:class:`UnnamedRouteError`) rather than
answering requests it does not record. A route served under two paths (an alias prefix)
has one handler and so one line. Add a line for each new route.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from deltaport.observe import audit_record as ops

OPERATIONS: dict[str, str] = {
    # the sharing listener: the Delta Sharing protocol (server.http.app)
    "_Api.list_shares": ops.LIST_SHARES,
    "_Api.get_share": ops.GET_SHARE,
    "_Api.list_schemas": ops.LIST_SCHEMAS,
    "_Api.list_tables": ops.LIST_TABLES,
    "_Api.list_all_tables": ops.LIST_ALL_TABLES,
    "_Api.head_table": ops.GET_TABLE_VERSION,
    "_Api.get_table": ops.GET_TABLE,
    "_Api.table_version": ops.GET_TABLE_VERSION,
    "_Api.table_metadata": ops.GET_TABLE_METADATA,
    "_Api.query_table": ops.QUERIED_TABLE,
    "_Api.query_info": ops.QUERIED_TABLE,
    "_Api.table_changes": ops.QUERIED_TABLE_CHANGES,
    "_Api.table_credentials": ops.TEMPORARY_CREDENTIAL,
    # the sharing listener: OAuth and activation links (server.oauth)
    "TokenEndpoint.answer": ops.OAUTH_TOKEN,
    "Activation.retrieve": ops.RETRIEVE_RECIPIENT_TOKEN,
    "Activation.info": ops.GET_ACTIVATION_URL_INFO,
    # the sharing listener: the Iceberg REST catalog (iceberg.routes)
    "IcebergCatalog.config": ops.ICEBERG_GET_CONFIG,
    "IcebergCatalog.list_namespaces": ops.ICEBERG_LIST_NAMESPACES,
    "IcebergCatalog.get_namespace": ops.ICEBERG_GET_NAMESPACE,
    "IcebergCatalog.namespace_exists": ops.ICEBERG_GET_NAMESPACE,
    "IcebergCatalog.list_tables": ops.ICEBERG_LIST_TABLES,
    "IcebergCatalog.load_table": ops.ICEBERG_LOAD_TABLE,
    "IcebergCatalog.table_exists": ops.ICEBERG_LOAD_TABLE,
    "IcebergCatalog.load_credentials": ops.ICEBERG_LOAD_CREDENTIALS,
    "IcebergCatalog.report_metrics": ops.ICEBERG_REPORT_METRICS,
    # the admin listener: deltaport's catalog API (admin.catalog_api, admin.audit_api)
    "CatalogApi.contents": ops.GET_CATALOG,
    "CatalogApi.create_share": ops.CREATE_SHARE,
    "CatalogApi.drop_share": ops.DELETE_SHARE,
    "CatalogApi.set_schema": ops.UPDATE_SHARE,
    "CatalogApi.add_table": ops.UPDATE_SHARE,
    "CatalogApi.remove_table": ops.UPDATE_SHARE,
    "CatalogApi.grant": ops.UPDATE_PERMISSIONS,
    "CatalogApi.revoke_grant": ops.UPDATE_PERMISSIONS,
    "CatalogApi.create_recipient": ops.CREATE_RECIPIENT,
    "CatalogApi.rotate": ops.ROTATE_RECIPIENT_TOKEN,
    "CatalogApi.revoke": ops.REVOKE_RECIPIENT_TOKENS,
    "CatalogApi.set_ip_access_list": ops.UPDATE_RECIPIENT,
    "AuditApi.audit_page": ops.LIST_AUDIT,
    # the admin listener: the provider API in Unity Catalog's shape (admin.unity)
    "SharesApi.create": ops.CREATE_SHARE,
    "SharesApi.listing": ops.LIST_SHARES_ADMIN,
    "SharesApi.get": ops.GET_SHARE_ADMIN,
    "SharesApi.update": ops.UPDATE_SHARE,
    "SharesApi.delete": ops.DELETE_SHARE,
    "SharesApi.permissions": ops.GET_SHARE_PERMISSIONS,
    "SharesApi.update_permissions": ops.UPDATE_PERMISSIONS,
    "RecipientsApi.create": ops.CREATE_RECIPIENT,
    "RecipientsApi.listing": ops.LIST_RECIPIENTS,
    "RecipientsApi.get": ops.GET_RECIPIENT,
    "RecipientsApi.update": ops.UPDATE_RECIPIENT,
    "RecipientsApi.delete": ops.DELETE_RECIPIENT,
    "RecipientsApi.rotate": ops.ROTATE_RECIPIENT_TOKEN,
    "RecipientsApi.share_permissions": ops.GET_RECIPIENT_SHARE_PERMISSIONS,
}


class UnnamedRouteError(LookupError):
    """An audited route whose handler :data:`OPERATIONS` does not name."""


def operation_of(handler: Callable[..., Any]) -> str:
    """The operation of ``handler`` (a route handler, or a wrapper of one made with
    :func:`functools.wraps`)."""
    name = getattr(handler, "__qualname__", repr(handler))
    try:
        return OPERATIONS[name]
    except KeyError:
        raise UnnamedRouteError(
            f"the route handler {name} has no audit operation: add it to "
            "deltaport.observe.audit_operations.OPERATIONS"
        ) from None
