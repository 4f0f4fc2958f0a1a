"""The catalog over the admin API (``/api/catalog``, ``/api/shares``, ``/api/tables``,
``/api/recipients``): what the ``deltaport share|table|recipient`` commands do, for a
server on a catalog database, so that they can run against it with ``--server URL``.

Writes go to the database the sharing listener reads; it sees them within its poll
interval, as it sees the commands'. A recipient's token is in the answer that creates or
rotates it, and never again. The handlers translate HTTP into calls on
:class:`~deltaport.catalog.provider.service.ProviderService`, which the Unity Catalog-shaped
API and the console's management pages call too.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

import msgspec
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from deltaport.admin.openapi.catalog_bodies import (
    IpAccessListChange,
    NewGrant,
    NewRecipient,
    NewShare,
    NewTable,
    Rotation,
    SchemaChange,
)
from deltaport.catalog.limits import grace_problem, lifetime_problem
from deltaport.catalog.provider.service import ProviderService
from deltaport.catalog.provider.settings import ProviderSettings
from deltaport.catalog.provider.tables import added_text, split_table_name
from deltaport.catalog.rows import (
    KEEP,
    Details,
    IssuedToken,
    RecipientSpec,
    RotationSpec,
)
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.config.model import ServerConfig
from deltaport.config.urls import iceberg_endpoint_for
from deltaport.protocol.errors import (
    InvalidParameterError,
    MalformedRequestError,
)

Handler = Callable[[Request], Awaitable[Response]]
Guard = Callable[[Handler], Handler]


def provider_service(store: SqlCatalog, config: ServerConfig, sharing_url: str) -> ProviderService:
    """The provider service over the server's catalog database, with its settings: storage
    credentials, where profiles point, how long activation links last, how long IP access
    lists may be. The admin API, the Unity Catalog-shaped API and the console call it."""
    settings = ProviderSettings(
        sharing_url,
        config.location_settings,
        link_lifetime=timedelta(seconds=config.activation_link_lifetime_seconds),
        max_ip_entries=config.max_ip_access_list_entries,
        iceberg_for=lambda endpoint: iceberg_endpoint_for(endpoint, config),
    )
    return ProviderService(store, settings, store.batch)


class CatalogApi:
    def __init__(self, service: ProviderService) -> None:
        self._service = service

    def routes(self, guard: Guard) -> list[BaseRoute]:
        def route(path: str, handler: Handler, method: str) -> Route:
            return Route(path, guard(handler), methods=[method])

        return [
            route("/api/catalog", self.contents, "GET"),
            route("/api/shares", self.create_share, "POST"),
            route("/api/shares/{share}", self.drop_share, "DELETE"),
            route("/api/shares/{share}/schemas/{schema}", self.set_schema, "PATCH"),
            route("/api/shares/{share}/grants", self.grant, "POST"),
            route("/api/shares/{share}/grants/{recipient}", self.revoke_grant, "DELETE"),
            route("/api/tables", self.add_table, "POST"),
            route("/api/tables/{table}", self.remove_table, "DELETE"),
            route("/api/recipients", self.create_recipient, "POST"),
            route("/api/recipients/{recipient}/rotate", self.rotate, "POST"),
            route("/api/recipients/{recipient}/revoke", self.revoke, "POST"),
            route("/api/recipients/{recipient}/ip-access-list", self.set_ip_access_list, "PUT"),
        ]

    async def contents(self, request: Request) -> Response:
        contents = await run_in_threadpool(self._service.contents)
        tokens_of: dict[str, list[dict[str, Any]]] = {}
        for token in contents.tokens.values():
            tokens_of.setdefault(token.recipient_key, []).append(
                {"expiresAt": token.expires_at, "revokedAt": token.revoked_at}
            )
        return _json(
            {
                "generation": contents.generation,
                "shares": [
                    {
                        "name": s.name,
                        "id": s.id,
                        "comment": s.comment,
                        "displayName": s.display_name,
                        "properties": dict(s.properties),
                    }
                    for s in contents.shares
                ],
                "tables": [_table_json(t) for t in contents.tables],
                "recipients": [
                    {
                        "name": r.name,
                        "properties": r.properties,
                        "shares": list(r.shares),
                        "endpoint": r.endpoint,
                        "tokenLifetimeSeconds": None
                        if r.token_lifetime is None
                        else int(r.token_lifetime.total_seconds()),
                        "tokens": tokens_of.get(key, []),
                        "ipAccessList": list(r.ip_access_list),
                        "authenticationType": r.authentication_type,
                        "oauthClients": [
                            {"clientId": client_id, **_life(c.token)}
                            for client_id, c in sorted(contents.clients.items())
                            if c.token.recipient_key == key
                        ],
                    }
                    for key, r in sorted(contents.recipients.items())
                ],
            }
        )

    async def create_share(self, request: Request) -> Response:
        body = await _body(request, NewShare)
        details = Details.of(body.displayName, body.properties)
        row = await run_in_threadpool(self._service.create_share, body.name, body.comment, details)
        return _json({"name": row.name, "id": row.id}, 201)

    async def drop_share(self, request: Request) -> Response:
        await run_in_threadpool(self._service.drop_share, request.path_params["share"])
        return Response(status_code=204)

    async def set_schema(self, request: Request) -> Response:
        body = await _body(request, SchemaChange)
        p = request.path_params
        row = await run_in_threadpool(
            lambda: self._service.set_schema_details(p["share"], p["schema"], body.given)
        )
        return _json(row.as_json())

    async def grant(self, request: Request) -> Response:
        body = await _body(request, NewGrant)
        await run_in_threadpool(self._service.grant, request.path_params["share"], body.recipient)
        return Response(status_code=204)

    async def revoke_grant(self, request: Request) -> Response:
        p = request.path_params
        await run_in_threadpool(self._service.revoke_grant, p["share"], p["recipient"])
        return Response(status_code=204)

    async def add_table(self, request: Request) -> Response:
        body = await _body(request, NewTable)
        row = await run_in_threadpool(self._service.add_table, body.name, body.spec)
        return _json({"message": added_text(row)}, 201)

    async def remove_table(self, request: Request) -> Response:
        share, schema, name = split_table_name(request.path_params["table"])
        await run_in_threadpool(self._service.remove_table, share, schema, name)
        return Response(status_code=204)

    async def create_recipient(self, request: Request) -> Response:
        body = await _body(request, NewRecipient)
        spec = RecipientSpec(
            body.properties,
            _lifetime(body.expiresInSeconds),
            body.endpoint,
            ip_access_list=body.ipAccessList,
            authentication_type=body.authenticationType,
        )
        if body.activation:
            link = await run_in_threadpool(
                self._service.create_recipient_with_link, body.name, spec
            )
            activation = {"url": link.url, "token": link.token, "expiresAt": link.expires_at}
            return _json({"recipient": link.recipient, "activation": activation}, 201)
        issued = await run_in_threadpool(self._service.create_recipient, body.name, spec)
        return self._profile(issued, 201)

    async def set_ip_access_list(self, request: Request) -> Response:
        body = await _body(request, IpAccessListChange)
        stored = await run_in_threadpool(
            self._service.set_ip_access_list, request.path_params["recipient"], body.ipAccessList
        )
        return _json({"ipAccessList": list(stored)})

    async def rotate(self, request: Request) -> Response:
        body = await _body(request, Rotation)
        lifetime = KEEP if body.expiresInSeconds is msgspec.UNSET else body.expiresInSeconds
        issued = await run_in_threadpool(
            lambda: self._service.rotate(
                request.path_params["recipient"],
                RotationSpec(
                    _duration("graceSeconds", body.graceSeconds, grace_problem),
                    lifetime if lifetime is KEEP else _lifetime(lifetime),
                    body.endpoint,
                ),
            )
        )
        return self._profile(issued, 200)

    async def revoke(self, request: Request) -> Response:
        await run_in_threadpool(self._service.revoke, request.path_params["recipient"])
        return Response(status_code=204)

    def _profile(self, issued: IssuedToken, status: int) -> Response:
        profile = self._service.profile(issued)
        return _json({"recipient": issued.recipient, "profile": profile}, status)


def _life(token: Any) -> dict[str, Any]:
    return {"expiresAt": token.expires_at, "revokedAt": token.revoked_at}


async def _body(request: Request, kind: type[Any]) -> Any:
    try:
        return msgspec.json.decode(await request.body() or b"{}", type=kind)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise MalformedRequestError(f"invalid request body: {exc}") from None
    except RecursionError:  # skipping an unknown field recurses into it
        raise MalformedRequestError("the request body is nested too deeply") from None


def _duration(field: str, seconds: int, problem: Callable[[float], str | None]) -> timedelta:
    """``seconds`` as a duration, refused (400) outside its bounds before it is converted:
    a number too large for a date would otherwise fail half way through a change."""
    message = problem(seconds)
    if message:
        raise InvalidParameterError(f"{field} {message}")
    return timedelta(seconds=seconds)


def _lifetime(seconds: int | None) -> timedelta | None:
    return None if seconds is None else _duration("expiresInSeconds", seconds, lifetime_problem)


def _table_json(t: Any) -> dict[str, Any]:
    return {
        "name": f"{t.share}.{t.schema}.{t.name}",
        "location": t.location,
        "id": t.id,
        "historyShared": t.history_shared,
        "startVersion": t.start_version,
        "partitionFilter": t.partition_filter,
        "accessModes": list(t.access_modes),
        "auxiliaryLocations": list(t.auxiliary_locations),
        "comment": t.comment,
        "displayName": t.display_name,
        "properties": dict(t.properties),
    }


def _json(value: object, status: int = 200) -> Response:
    return Response(msgspec.json.encode(value), status_code=status, media_type="application/json")
