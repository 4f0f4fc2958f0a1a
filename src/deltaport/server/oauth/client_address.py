"""Which address a request comes from, as IP access lists judge it.

By default it is the TCP peer's: ``X-Forwarded-For`` is never believed, since any client
can send one. Behind a reverse proxy or load balancer, ``trustedProxies`` lists the
ranges it connects from; a request whose peer is in them is judged by the
``X-Forwarded-For`` header, read from the right (the hop the trusted proxy added) past
every trusted address to the first one that is not: a client cannot choose its address by
sending a header of its own, as the proxy appends the real peer after it.

:class:`ClientAddresses` puts the address so found into the ASGI scope's ``client``, so
every endpoint after it (file URLs included) sees the same one.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from starlette.types import ASGIApp, Receive, Scope, Send

from deltaport.catalog.recipient_access import IpAccessList, parse_network

FORWARDED_FOR = b"x-forwarded-for"


def client_host(scope: Scope) -> str | None:
    """The client's address of an ASGI scope (after :class:`ClientAddresses`)."""
    client = scope.get("client")
    return str(client[0]) if client else None


class ClientAddresses:
    """ASGI middleware: the scope's ``client`` becomes the address the request is judged
    by (unchanged when no proxy is trusted)."""

    def __init__(self, app: ASGIApp, trusted_proxies: Sequence[str] = ()) -> None:
        self._app = app
        self._trusted = IpAccessList(tuple(parse_network(p) for p in trusted_proxies))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._trusted.networks and scope["type"] == "http":
            found = self.forwarded_client(scope)
            if found is not None:
                port = scope["client"][1] if scope.get("client") else 0
                scope = {**scope, "client": (found, port)}
        await self._app(scope, receive, send)

    def forwarded_client(self, scope: Scope) -> str | None:
        """The address a trusted proxy forwarded for, None when the peer is not trusted or
        said nothing usable."""
        peer = client_host(scope)
        if peer is None or not self._trusted.allows(peer):
            return None
        hops: list[str] = []
        for name, value in scope.get("headers", ()):
            if name == FORWARDED_FOR:
                hops.extend(h.strip() for h in value.decode("latin-1").split(","))
        for hop in reversed(hops):
            address = _address(hop)
            if address is None:
                return None  # a hop that is no address: nothing further left can be believed
            if not self._trusted.allows(address):
                return address
        return _address(hops[0]) if hops else None


def _address(text: str) -> str | None:
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        return None
