"""Which address a request comes from, as IP access lists and the failed-authentication
limit judge it.

By default it is the TCP peer's: ``X-Forwarded-For`` is never believed, since any client
can send one. Behind a reverse proxy or load balancer, ``trustedProxies`` lists the
ranges it connects from; a request whose peer is in them is judged by the
``X-Forwarded-For`` header, read from the right (the hop the trusted proxy added) past
every trusted address to the first one that is not: a client cannot choose its address by
sending a header of its own, as the proxy appends the real peer after it. A hop is an
address, with or without a port (``203.0.113.5``, ``203.0.113.5:4711``, ``2001:db8::5``,
``[2001:db8::5]:443``); a hop that is none (``unknown``, a name, garbage) ends the walk,
and the request comes from nowhere: refused by any IP access list, counted as one unknown
address by the failed-authentication limit, never taken for the proxy's own.

:class:`ClientAddresses` puts the address so found into the ASGI scope's ``client`` (None
for nowhere), so every endpoint after it (file URLs included) sees the same one.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from starlette.types import ASGIApp, Receive, Scope, Send

from deltaport.catalog.recipient_access import IpAccessList, parse_network

FORWARDED_FOR = b"x-forwarded-for"
MAX_PORT = 65535


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
            hops = self._forwarded_hops(scope)
            if hops:
                found = self.forwarded_client(hops)
                port = scope["client"][1] if scope.get("client") else 0
                scope = {**scope, "client": None if found is None else (found, port)}
        await self._app(scope, receive, send)

    def _forwarded_hops(self, scope: Scope) -> list[str]:
        """The ``X-Forwarded-For`` hops of a request from a trusted proxy (none from any
        other peer, or when the proxy sent no header)."""
        peer = client_host(scope)
        if peer is None or not self._trusted.allows(peer):
            return []
        hops: list[str] = []
        for name, value in scope.get("headers", ()):
            if name == FORWARDED_FOR:
                hops.extend(h.strip() for h in value.decode("latin-1").split(","))
        return hops

    def forwarded_client(self, hops: Sequence[str]) -> str | None:
        """The address a trusted proxy forwarded for in ``hops``; None: from nowhere."""
        for hop in reversed(hops):
            address = hop_address(hop)
            if address is None or not self._trusted.allows(address):
                return address  # a hop that is no address: nothing further left is believed
        return hop_address(hops[0])


def hop_address(hop: str) -> str | None:
    """The address of one ``X-Forwarded-For`` hop, its port dropped (``ip``, ``ip:port``,
    ``[v6]``, ``[v6]:port``); None when it is no address."""
    host, port = hop, ""
    if hop.startswith("["):
        host, bracket, port = hop[1:].partition("]")
        if not bracket:
            return None
    elif hop.count(":") == 1:
        host, _, port = hop.partition(":")
        port = ":" + port
    if port and not _is_port(port):
        return None
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return None
    if hop.startswith("[") and ip.version != 6:
        return None
    return str(ip)


def _is_port(text: str) -> bool:
    digits = text[1:]
    return (
        text.startswith(":")
        and 0 < len(digits) <= 5
        and digits.isascii()
        and digits.isdigit()
        and int(digits) <= MAX_PORT
    )
