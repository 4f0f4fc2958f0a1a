"""Recipients: ``/api/2.1/unity-catalog/recipients[/{name}[/rotate-token|/share-permissions]]``.

A recipient authenticates with a bearer token (``authentication_type`` ``TOKEN``). The
answers that make a token (create, rotate-token) carry the recipient's profile, with the
token, under ``profile``: it is shown that once. ``tokens`` lists the recipient's valid
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
    RotateToken,
    UpdateRecipient,
    body,
    refuse_set,
)
from deltaport.admin.unity.errors import PREFIX, unity_json
from deltaport.admin.unity.paging import page
from deltaport.catalog.commands import profile_document
from deltaport.catalog.limits import grace_problem, lifetime_problem
from deltaport.catalog.rows import KEEP, CatalogContents, IssuedToken, RecipientRow, TokenRow
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.catalog.tokens import credential_id
from deltaport.protocol.errors import InvalidParameterError, ResourceNotFoundError
from deltaport.protocol.names import name_key

TOKEN = "TOKEN"
_NOT_YET = "not supported yet (a TOKEN recipient only, for now)"


class RecipientsApi:
    def __init__(self, store: SqlCatalog, sharing_url: str) -> None:
        self._store = store
        self._sharing_url = sharing_url

    def routes(self, wrap: Any) -> list[BaseRoute]:
        recipients = PREFIX + "recipients"
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
        refuse_set(given, "", ("ip_access_list",), _NOT_YET)
        refuse_set(
            given,
            "",
            ("id", "owner", "sharing_code", "data_recipient_global_metastore_id"),
            "not supported by deltaport",
        )
        if given.authentication_type is None:
            raise InvalidParameterError("authentication_type: required (TOKEN)")
        if given.authentication_type != TOKEN:
            raise InvalidParameterError(
                f"authentication_type {given.authentication_type[:50]!r}: {_NOT_YET}"
            )
        properties = given.properties_kvpairs.properties if given.properties_kvpairs else {}
        issued = await run_in_threadpool(
            lambda: self._store.create_recipient(
                given.name,
                properties,
                _lifetime(given.expiration_time),
                self._sharing_url,
                comment=given.comment,
            )
        )
        return await self._answer(given.name, issued)

    async def listing(self, request: Request) -> Response:
        contents = await run_in_threadpool(self._store.contents)
        chosen, token = page(list(contents.recipients), lambda k: k, request.query_params)
        out: dict[str, Any] = {"recipients": [_recipient_json(contents, k) for k in chosen]}
        if token:
            out["next_page_token"] = token
        return unity_json(out)

    async def get(self, request: Request) -> Response:
        return await self._answer(request.path_params["recipient"])

    async def update(self, request: Request) -> Response:
        name = request.path_params["recipient"]
        given: UpdateRecipient = await body(request, UpdateRecipient)
        refuse_set(given, "", ("ip_access_list",), _NOT_YET)
        refuse_set(given, "", ("id", "new_name", "owner"), "not supported by deltaport")
        refuse_set(
            given,
            "",
            ("expiration_time",),
            "a token's expiry is set when it is made (create, rotate-token)",
        )
        properties = given.properties_kvpairs.properties if given.properties_kvpairs else None
        comment = KEEP if given.comment is UNSET else given.comment
        await run_in_threadpool(
            lambda: self._store.update_recipient(name, properties=properties, comment=comment)
        )
        return await self._answer(name)

    async def delete(self, request: Request) -> Response:
        await run_in_threadpool(self._store.drop_recipient, request.path_params["recipient"])
        return unity_json({})

    async def rotate(self, request: Request) -> Response:
        name = request.path_params["recipient"]
        given: RotateToken = await body(request, RotateToken)
        seconds = given.existing_token_expire_in_seconds
        problem = grace_problem(seconds)
        if problem:
            raise InvalidParameterError(f"existing_token_expire_in_seconds {problem}")
        issued = await run_in_threadpool(
            lambda: self._store.rotate(
                name, timedelta(seconds=seconds), KEEP, default_endpoint=self._sharing_url
            )
        )
        return await self._answer(name, issued)

    async def share_permissions(self, request: Request) -> Response:
        name = request.path_params["recipient"]
        contents = await run_in_threadpool(self._store.contents)
        recipient = _recipient(contents, name)
        names = {name_key(s.name): s.name for s in contents.shares}
        shares = [names[k] for k in recipient.shares if k in names]
        chosen, token = page(shares, lambda s: s, request.query_params)
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

    async def _answer(self, name: str, issued: IssuedToken | None = None) -> Response:
        contents = await run_in_threadpool(self._store.contents)
        _recipient(contents, name)
        out = _recipient_json(contents, name_key(name))
        if issued is not None:
            out["profile"] = profile_document(issued, issued.endpoint or self._sharing_url)
        return unity_json(out)


def _lifetime(expiration_time: int | None) -> timedelta | None:
    """The token lifetime that ends at ``expiration_time`` (ms since the epoch)."""
    if expiration_time is None:
        return None
    seconds = (expiration_time - time.time() * 1000) / 1000
    problem = lifetime_problem(seconds)
    if problem:
        raise InvalidParameterError(
            f"expiration_time: the token would live {int(seconds)} seconds; it {problem}"
        )
    return timedelta(seconds=round(seconds))


def _ending(pair: tuple[str, TokenRow]) -> tuple[bool, int]:
    """Tokens in the order they end, those that never do last."""
    return pair[1].expires_at is None, pair[1].expires_at or 0


def _recipient(contents: CatalogContents, name: str) -> RecipientRow:
    found = contents.recipients.get(name_key(name))
    if found is None:
        raise ResourceNotFoundError(f"recipient {name[:300]!r} does not exist")
    return found


def _recipient_json(contents: CatalogContents, key: str) -> dict[str, Any]:
    r = contents.recipients[key]
    now = int(time.time() * 1000)
    tokens = [
        (hashed, t)
        for hashed, t in contents.tokens.items()
        if t.recipient_key == key
        and t.revoked_at is None
        and (t.expires_at is None or t.expires_at > now)
    ]
    out: dict[str, Any] = {
        "name": r.name,
        "authentication_type": TOKEN,
        "activated": True,
        "properties_kvpairs": {"properties": dict(r.properties)},
        "tokens": [
            {"id": credential_id(hashed)}
            | ({} if t.expires_at is None else {"expiration_time": t.expires_at})
            for hashed, t in sorted(
                tokens, key=lambda p: (p[1].expires_at is None, p[1].expires_at or 0)
            )
        ],
    }
    ends = [t.expires_at for _, t in tokens]
    if ends and None not in ends:
        out["expiration_time"] = max(e for e in ends if e is not None)
    if r.comment is not None:
        out["comment"] = r.comment
    return out
