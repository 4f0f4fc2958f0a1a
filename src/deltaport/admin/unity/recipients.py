"""Recipients: ``/api/2.1/unity-catalog/recipients[/{name}[/rotate-token|/share-permissions]]``.

A recipient authenticates with bearer tokens (``authentication_type`` ``TOKEN``) or as an
OAuth client (``OAUTH_CLIENT_CREDENTIALS``). As in Unity Catalog, its credential is handed
over by an activation link: create and rotate-token answer ``activation_url``, whose first
download issues the credential and answers the recipient's profile (see
:mod:`deltaport.catalog.recipient_access`); the link is shown in that answer only, and
``activated`` says whether it was used. ``tokens`` lists a ``TOKEN`` recipient's valid
tokens by id (a public name of the token, never the token or its hash)."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from deltaport.admin.unity.bodies import (
    UNSET,
    CreateRecipient,
    IpAccessList,
    RotateToken,
    Unset,
    UpdateRecipient,
    body,
    refuse_set,
)
from deltaport.admin.unity.errors import unity_json
from deltaport.admin.unity.paging import next_page_token, page, page_request
from deltaport.catalog.database.connection import Database
from deltaport.catalog.limits import grace_problem, lifetime_problem
from deltaport.catalog.listings.by_name import (
    RecipientCredentials,
    recipient_credentials,
    recipients_after,
)
from deltaport.catalog.listings.summaries import recipient_view
from deltaport.catalog.provider.service import ProviderService
from deltaport.catalog.recipient_access import ActivationLink, ip_access_problem
from deltaport.catalog.rows import KEEP, RecipientChange, RecipientSpec, TokenRow
from deltaport.catalog.store_checks import now_ms
from deltaport.catalog.tokens import AUTHENTICATION_TYPES, TOKEN, credential_id
from deltaport.protocol.errors import InvalidParameterError, ResourceNotFoundError
from deltaport.protocol.names import name_key

_IPS = "ip_access_list.allowed_ip_addresses"


class RecipientsApi:
    def __init__(self, service: ProviderService, database: Database, max_ips: int) -> None:
        """Changes go through ``service``; pages and views are read from ``database``;
        ``max_ips`` bounds an IP access list (a 400 naming the field before any change)."""
        self._service = service
        self._database = database
        self._max_ips = max_ips

    def routes(self, wrap: Any, prefix: str) -> list[BaseRoute]:
        recipients = prefix + "recipients"
        one = recipients + "/{recipient}"
        return [
            Route(recipients, wrap(self.create), methods=["POST"]),
            Route(recipients, wrap(self.listing), methods=["GET"]),
            Route(one, wrap(self.get), methods=["GET"]),
            Route(one, wrap(self.update), methods=["PATCH"]),
            Route(one, wrap(self.delete), methods=["DELETE"]),
            Route(one + "/rotate-token", wrap(self.rotate), methods=["POST"]),
            Route(one + "/share-permissions", wrap(self.share_permissions), methods=["GET"]),
        ]

    async def create(self, request: Request) -> Response:
        given: CreateRecipient = await body(request, CreateRecipient)
        refuse_set(
            given,
            "",
            ("id", "owner", "sharing_code", "data_recipient_global_metastore_id"),
            "not supported by deltaport",
        )
        kind = _authentication_type(given.authentication_type)
        ips = self._ips(given.ip_access_list) if given.ip_access_list else []
        properties = given.properties_kvpairs.as_dict() if given.properties_kvpairs else {}
        _check_expiration(given.expiration_time)
        spec = RecipientSpec(
            properties,
            comment=given.comment,
            ip_access_list=ips,
            authentication_type=kind,
            expires_at=given.expiration_time,
        )
        link = await run_in_threadpool(self._service.create_recipient_with_link, given.name, spec)
        return await self._answer(given.name, link)

    async def listing(self, request: Request) -> Response:
        size, after = page_request(request.query_params)
        found = await run_in_threadpool(recipients_after, self._database, after, size + 1, now_ms())
        token = next_page_token([f.recipient.name for f in found], size)
        out: dict[str, Any] = {"recipients": [_recipient_json(f) for f in found[:size]]}
        if token:
            out["next_page_token"] = token
        return unity_json(out)

    async def get(self, request: Request) -> Response:
        return await self._answer(request.path_params["recipient"])

    async def update(self, request: Request) -> Response:
        name = request.path_params["recipient"]
        given: UpdateRecipient = await body(request, UpdateRecipient)
        refuse_set(given, "", ("id", "new_name", "owner"), "not supported by deltaport")
        refuse_set(
            given,
            "",
            ("expiration_time",),
            "a token's expiry is set when it is made (create, rotate-token)",
        )
        change = RecipientChange(
            given.properties_kvpairs.as_dict() if given.properties_kvpairs else KEEP,
            KEEP if given.comment is UNSET else given.comment,
            KEEP if isinstance(given.ip_access_list, Unset) else self._ips(given.ip_access_list),
        )
        await run_in_threadpool(self._service.update_recipient, name, change)
        return await self._answer(name)

    async def delete(self, request: Request) -> Response:
        await run_in_threadpool(self._service.drop_recipient, request.path_params["recipient"])
        return unity_json({})

    async def rotate(self, request: Request) -> Response:
        name = request.path_params["recipient"]
        given: RotateToken = await body(request, RotateToken)
        if given.name is not None and name_key(given.name) != name_key(name):
            raise InvalidParameterError(f"name: {given.name[:100]!r} is not the path's recipient")
        seconds = given.existing_token_expire_in_seconds
        problem = grace_problem(seconds)
        if problem:
            raise InvalidParameterError(f"existing_token_expire_in_seconds {problem}")
        link = await run_in_threadpool(
            lambda: self._service.rotate_with_link(name, timedelta(seconds=seconds))
        )
        return await self._answer(name, link)

    async def share_permissions(self, request: Request) -> Response:
        name = request.path_params["recipient"]
        view = await run_in_threadpool(recipient_view, self._database, name)
        if view is None:
            raise _missing(name)
        recipient = view.recipient
        chosen, token = page(view.granted, lambda s: s, request.query_params)
        out: dict[str, Any] = {
            "permissions_out": [
                {
                    "share_name": share,
                    "privilege_assignments": [
                        {"principal": recipient.name, "privileges": ["SELECT"]}
                    ],
                }
                for share in chosen
            ]
        }
        if token:
            out["next_page_token"] = token
        return unity_json(out)

    def _ips(self, given: IpAccessList) -> list[str]:
        """The entries of ``ip_access_list``, refused with a 400 naming the field."""
        problem = ip_access_problem(given.allowed_ip_addresses, self._max_ips)
        if problem:
            raise InvalidParameterError(f"{_IPS}: the list {problem}")
        return given.allowed_ip_addresses

    async def _answer(self, name: str, link: ActivationLink | None = None) -> Response:
        found = await run_in_threadpool(recipient_credentials, self._database, name, now_ms())
        if found is None:
            raise _missing(name)
        out = _recipient_json(found)
        if link is not None:
            out["activation_url"] = link.url
            if found.recipient.authentication_type == TOKEN:
                out["tokens"].append({"activation_url": link.url})
        return unity_json(out)


def _authentication_type(given: str | None) -> str:
    if given not in AUTHENTICATION_TYPES:
        raise InvalidParameterError(
            "authentication_type: " + " or ".join(AUTHENTICATION_TYPES) + f", got {given!r:.60}"
        )
    return given


def _check_expiration(expiration_time: int | None) -> None:
    """``expiration_time`` is when the recipient ends, in milliseconds since the epoch (as
    in Unity Catalog), not a lifetime: its credentials, whenever issued, end then."""
    if expiration_time is None:
        return
    seconds = (expiration_time - time.time() * 1000) / 1000
    problem = lifetime_problem(seconds)
    if problem:
        raise InvalidParameterError(
            f"expiration_time: the token would live {int(seconds)} seconds; it {problem}"
        )


def _ending(token: TokenRow) -> tuple[bool, int]:
    """Credentials in the order they end, those that never do last."""
    return token.expires_at is None, token.expires_at or 0


def _missing(name: str) -> ResourceNotFoundError:
    return ResourceNotFoundError(f"recipient {name[:300]!r} does not exist")


def _recipient_json(found: RecipientCredentials) -> dict[str, Any]:
    """The recipient in the SDK's ``RecipientInfo`` shape."""
    r = found.recipient
    out: dict[str, Any] = {
        "name": r.name,
        "authentication_type": r.authentication_type,
        "activated": not found.unused_link,
        "properties_kvpairs": {"properties": dict(r.properties)},
    }
    if r.ip_access_list:
        out["ip_access_list"] = {"allowed_ip_addresses": list(r.ip_access_list)}
    if r.authentication_type == TOKEN:
        tokens = sorted(found.tokens, key=lambda pair: _ending(pair[1]))
        out["tokens"] = [
            {"id": credential_id(h)}
            | ({} if t.expires_at is None else {"expiration_time": t.expires_at})
            for h, t in tokens
        ]
        ends = [t.expires_at for _, t in tokens]
    else:
        ends = [c.expires_at for c in found.clients]
    if r.expires_at is not None:
        out["expiration_time"] = r.expires_at
    elif ends and None not in ends:
        out["expiration_time"] = max(e for e in ends if e is not None)
    if r.comment is not None:
        out["comment"] = r.comment
    return out
