"""The activation routes of the sharing listener, at Unity Catalog's public paths:
``GET .../data_sharing_activation/{link}`` answers the recipient's profile once (its first
token is issued then), ``GET .../data_sharing_activation_info/{link}`` whether the link can
still be used. A used, expired or unknown link answers 404; a request from outside the
recipient's IP access list 403, without using the link up."""

from __future__ import annotations

import msgspec
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from deltaport.catalog.commands import profile_document
from deltaport.catalog.database import DatabaseUnavailableError
from deltaport.catalog.recipient_access import (
    ACTIVATION_INFO_PATH,
    ACTIVATION_PATH,
    IpAccessList,
    LinkedRecipient,
)
from deltaport.catalog.rows import CatalogNotFoundError
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.protocol.errors import (
    ResourceNotFoundError,
    SharingError,
    TemporarilyUnavailableError,
)
from deltaport.server.oauth.client_address import client_host

_NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


class Activation:
    def __init__(self, store: SqlCatalog, default_endpoint: str) -> None:
        self._store = store
        self._default_endpoint = default_endpoint

    def routes(self) -> list[BaseRoute]:
        return [
            Route(f"{ACTIVATION_PATH}/{{link}}", self.retrieve, methods=["GET"]),
            Route(f"{ACTIVATION_INFO_PATH}/{{link}}", self.info, methods=["GET"]),
        ]

    async def retrieve(self, request: Request) -> Response:
        link = request.path_params["link"]
        address = client_host(request.scope)

        def admit(linked: LinkedRecipient) -> None:
            request.state.recipient = linked.name  # for its audit record
            IpAccessList.of(linked.ip_access_list).admit(address)

        try:
            issued = await run_in_threadpool(self._store.activate, link, admit)
        except SharingError as exc:
            return _error(exc)
        except CatalogNotFoundError as exc:
            return _error(ResourceNotFoundError(str(exc)))
        except DatabaseUnavailableError:
            return _error(_unavailable())
        profile = profile_document(issued, issued.endpoint or self._default_endpoint)
        return Response(
            msgspec.json.encode(profile), media_type="application/json", headers=_NO_STORE
        )

    async def info(self, request: Request) -> Response:
        try:
            linked = await run_in_threadpool(
                self._store.activation_link, request.path_params["link"]
            )
            request.state.recipient = linked.name  # for its audit record
            IpAccessList.of(linked.ip_access_list).admit(client_host(request.scope))
        except SharingError as exc:
            return _error(exc)
        except CatalogNotFoundError as exc:
            return _error(ResourceNotFoundError(str(exc)))
        except DatabaseUnavailableError:
            return _error(_unavailable())
        return Response(b"{}", media_type="application/json", headers=_NO_STORE)


def _unavailable() -> SharingError:
    return TemporarilyUnavailableError("the catalog database cannot be reached; retry later")


def _error(error: SharingError) -> Response:
    body = msgspec.json.encode(error.body())
    return Response(body, status_code=error.status, media_type="application/json")
