"""The management pages' routes under ``/console`` (each behind the session check)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from deltaport.admin.tokens import AdminTokens
from deltaport.catalog.database.connection import Database
from deltaport.catalog.provider.service import ProviderService
from deltaport.config.model import ServerConfig
from deltaport.console.manage.changes import Changes
from deltaport.console.manage.recipient_pages import RecipientPages
from deltaport.console.manage.share_pages import SharePages
from deltaport.observe.audit_log import AuditLog

Handler = Callable[[Request], Awaitable[Response]]


def manage_routes(
    service: ProviderService,
    database: Database,
    config: ServerConfig,
    audit: AuditLog | None,
    tokens: AdminTokens,
    refresh: Callable[[], None] | None,
    signed_in: Callable[[Handler], Handler],
) -> list[BaseRoute]:
    changes = Changes(service, database, tokens, audit, refresh)
    shares = SharePages(changes, config)
    recipients = RecipientPages(changes, config)
    share = "/shares/{share}"
    schema = share + "/schemas/{schema}"
    table = schema + "/tables/{table}"
    recipient = "/recipients/{recipient}"
    grant = recipient + "/grants/{share}"
    pages: list[tuple[str, str, Handler]] = [
        ("/shares", "GET", shares.listing),
        ("/shares", "POST", shares.create),
        (share, "GET", shares.show),
        (share + "/filter-check", "GET", shares.filter_report),
        (share + "/tables", "POST", shares.add_table),
        (share + "/drop", "GET", shares.confirm_drop_share),
        (share + "/drop", "POST", shares.drop_share),
        (schema, "POST", shares.set_schema),
        (schema + "/drop", "GET", shares.confirm_drop_schema),
        (schema + "/drop", "POST", shares.drop_schema),
        (table + "/edit", "GET", shares.edit_form),
        (table + "/edit", "POST", shares.edit),
        (table + "/remove", "GET", shares.confirm_remove_table),
        (table + "/remove", "POST", shares.remove_table),
        ("/recipients", "GET", recipients.listing),
        ("/recipients", "POST", recipients.create),
        (recipient, "GET", recipients.show),
        (recipient + "/properties", "POST", recipients.set_properties),
        (recipient + "/ip-access-list", "POST", recipients.set_ip_access_list),
        (recipient + "/rotate", "POST", recipients.rotate),
        (recipient + "/revoke", "GET", recipients.confirm_revoke),
        (recipient + "/revoke", "POST", recipients.revoke),
        (recipient + "/delete", "GET", recipients.confirm_delete),
        (recipient + "/delete", "POST", recipients.delete),
        (recipient + "/grants", "POST", recipients.grant),
        (grant + "/revoke", "GET", recipients.confirm_revoke_grant),
        (grant + "/revoke", "POST", recipients.revoke_grant),
    ]
    return [Route(path, signed_in(handler), methods=[method]) for path, method, handler in pages]
