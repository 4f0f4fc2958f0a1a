"""A recipient's IP access list: the addresses and CIDR ranges (IPv4 and IPv6) its
requests may come from. An empty list lets requests come from anywhere.

Entries are checked when they are given and stored as written (normalised: ``10.1.2.3/8``
is refused rather than silently widened, ``2001:DB8::/32`` is kept as ``2001:db8::/32``).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass

from deltaport.protocol.errors import PermissionDeniedError

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

DEFAULT_MAX_ENTRIES = 100
"""How many entries a list may hold unless ``maxIpAccessListEntries`` says otherwise."""
MAX_ENTRY_LENGTH = 64


def parse_network(entry: str) -> Network:
    """An address (a network of one) or a CIDR range; ValueError says why it is neither."""
    text = entry.strip()
    if not text or len(text) > MAX_ENTRY_LENGTH:
        raise ValueError(f"{entry[:80]!r} is not an IP address or CIDR range")
    try:
        return ipaddress.ip_network(text, strict=True)
    except ValueError as exc:
        if "has host bits set" in str(exc):
            raise ValueError(
                f"{text!r} has host bits set; write the range's first address "
                f"({ipaddress.ip_network(text, strict=False)})"
            ) from None
        raise ValueError(f"{entry[:80]!r} is not an IP address or CIDR range") from None


def ip_access_problem(entries: Sequence[str], max_entries: int) -> str | None:
    """Why ``entries`` cannot be a recipient's IP access list, or None."""
    if len(entries) > max_entries:
        return f"has {len(entries)} entries; at most {max_entries} are allowed"
    for i, entry in enumerate(entries):
        try:
            parse_network(entry)
        except ValueError as exc:
            return f"entry {i + 1}: {exc}"
    return None


def normalised(entries: Sequence[str]) -> tuple[str, ...]:
    """The entries as they are stored: each network's own spelling, duplicates dropped."""
    seen: dict[str, None] = {}
    for entry in entries:
        network = parse_network(entry)
        text = str(network.network_address) if _single(network) else str(network)
        seen.setdefault(text, None)
    return tuple(seen)


def _single(network: Network) -> bool:
    return network.num_addresses == 1


@dataclass(frozen=True)
class IpAccessList:
    """The networks a recipient's requests may come from; empty: anywhere."""

    networks: tuple[Network, ...] = ()

    @classmethod
    def of(cls, entries: Sequence[str]) -> IpAccessList:
        return cls(tuple(parse_network(e) for e in entries))

    def allows(self, address: str | None) -> bool:
        """Whether a request from ``address`` (the client's, as the listener judged it)
        may go on; an unknown or unparsable address is refused by a non-empty list."""
        if not self.networks:
            return True
        if address is None:
            return False
        try:
            ip = ipaddress.ip_address(address.split("%", 1)[0])
        except ValueError:
            return False
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        return any(ip in network for network in self.networks)

    def admit(self, address: str | None) -> None:
        """Raise 403 ``PERMISSION_DENIED`` unless a request from ``address`` may go on (the
        message names neither the list nor the address)."""
        if not self.allows(address):
            raise PermissionDeniedError(
                "requests from this address are not allowed for this recipient; ask the "
                "provider to add it to the recipient's IP access list"
            )


ANYWHERE = IpAccessList()
"""The list of a recipient without one: requests from any address."""
