"""The activation routes, at Unity Catalog's public paths:
``GET .../data_sharing_activation/{link}`` answers the recipient's profile once (its first
token is issued then), ``GET .../data_sharing_activation_info/{link}`` whether the link can
still be used. A used, expired or unknown link answers 404; a request from outside the
recipient's IP access list 403, without using the link up.

Both listeners serve them, over the same catalog, so a link is used once whichever
listener answers it: the sharing listener (where the link points) and the admin listener
(the host the Databricks SDK's ``recipient_activation`` calls). Neither asks for a token:
the link is the credential. Both judge the client's address alike (``trustedProxies``, see
:mod:`~deltaport.web.client_address`); each says in which shape errors are
answered. A link that opens nothing (404) is a failed authentication in the listener's
failed-authentication limit: past it the address is answered 429 ``TOO_MANY_REQUESTS``
with ``Retry-After`` before the link is looked up, so that links cannot be guessed at
the rate the server answers."""

from __future__ import annotations

from collections.abc import Callable

import msgspec
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute

from deltaport.catalog.provider.profiles import profile_document
from deltaport.catalog.recipient_access import IpAccessList, LinkedRecipient
from deltaport.catalog.rows import catalog_refusal
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.protocol.errors import ResourceNotFoundError, SharingError, TooManyRequestsError
from deltaport.server.openapi.catalog_routes import ACTIVATION_INFO, RETRIEVE_ACTIVATION
from deltaport.web.client_address import client_host
from deltaport.web.failed_auth import FailedAuthLimit, client_address
from deltaport.web.operation_routes import operation_route

_NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}

ErrorAnswer = Callable[[SharingError], Response]


def error_answer(error: SharingError) -> Response:
    """The sharing API's error shape ``{"errorCode", "message"}`` (with ``Retry-After`` on
    a 429)."""
    body = msgspec.json.encode(error.body())
    response = Response(body, status_code=error.status, media_type="application/json")
    if isinstance(error, TooManyRequestsError):
        response.headers["retry-after"] = str(error.retry_after)
    return response


class Activation:
    def __init__(
        self,
        store: SqlCatalog,
        default_endpoint: str,
        limit: FailedAuthLimit,
        answer: ErrorAnswer = error_answer,
        iceberg_for: Callable[[str], str | None] = lambda _: None,
    ) -> None:
        """``limit``: the listener's failed-authentication limit; ``iceberg_for``: the
        Iceberg catalog's URI beside a sharing endpoint, for the profile's
        ``icebergEndpoint``."""
        self._store = store
        self._limit = limit
        self._iceberg_for = iceberg_for
        self._default_endpoint = default_endpoint
        self._answer_error = answer

    def routes(self) -> list[BaseRoute]:
        return [
            operation_route("", RETRIEVE_ACTIVATION, self.retrieve),
            operation_route("", ACTIVATION_INFO, self.info),
        ]

    async def retrieve(self, request: Request) -> Response:
        link = request.path_params["link"]
        address = client_host(request.scope)

        def admit(linked: LinkedRecipient) -> None:
            request.state.recipient = linked.name  # for its audit record
            IpAccessList.of(linked.ip_access_list).admit(address)

        def profile() -> bytes:
            issued = self._store.activate(link, admit)
            endpoint = issued.endpoint or self._default_endpoint
            document = profile_document(issued, endpoint, self._iceberg_for(endpoint))
            return msgspec.json.encode(document)

        return await self._answered(request, profile)

    async def info(self, request: Request) -> Response:
        link = request.path_params["link"]
        address = client_host(request.scope)

        def check() -> bytes:
            linked = self._store.activation_link(link)
            request.state.recipient = linked.name  # for its audit record
            IpAccessList.of(linked.ip_access_list).admit(address)
            return b"{}"

        return await self._answered(request, check)

    async def _answered(self, request: Request, work: Callable[[], bytes]) -> Response:
        """The JSON ``work`` makes (in a worker thread), or the error it raised; a link
        that opens nothing counts as a failed authentication of the client's address."""
        address = client_address(request.client)
        try:
            self._limit.check(address)
            body = await run_in_threadpool(work)
        except Exception as exc:
            error = exc if isinstance(exc, SharingError) else catalog_refusal(exc)
            if error is None:
                raise
            if isinstance(error, ResourceNotFoundError):
                self._limit.failed(address, "activation link")
            return self._answer_error(error)
        return Response(body, media_type="application/json", headers=_NO_STORE)
