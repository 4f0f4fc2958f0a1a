"""What limits a recipient's access and how its credentials are handed over: its IP access
list, and its single-use activation links (with the writes
:class:`~deltaport.catalog.sql_store.SqlCatalog` makes of both, in its transactions).

A recipient's IP access list: the addresses and CIDR ranges (IPv4 and IPv6) its
requests may come from. An empty list lets requests come from anywhere.

Entries are checked when they are given and stored as written (normalised: ``10.1.2.3/8``
is refused rather than silently widened, ``2001:DB8::/32`` is kept as ``2001:db8::/32``).

Activation links: a recipient's credentials handed over by a single-use URL instead of
a file.

A recipient created with a link gets no token then: the first download of the link issues
it (in the transaction that marks the link used) and answers the profile, so the catalog
never holds a secret it could show twice. A link is 256 random bits, kept only as a keyed
hash like a token; it is used once, and expires unused after its lifetime.

The link is the path of Unity Catalog's public activation route (what the Databricks
SDK's ``recipient_activation.retrieve_token`` calls) on the sharing listener's origin.
"""

from __future__ import annotations

import ipaddress
import json
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import urlsplit

from deltaport.catalog.database.connection import Database, Transaction
from deltaport.catalog.limits import MAX_DURATION_SECONDS
from deltaport.catalog.rows import (
    CatalogError,
    CatalogNotFoundError,
    RecipientSpec,
    capped,
    insert_new,
)
from deltaport.protocol.errors import PermissionDeniedError
from deltaport.protocol.names import name_key

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


# -- activation links -------------------------------------------------------------------
ACTIVATION_PATH = "/api/2.1/unity-catalog/public/data_sharing_activation"
"""``GET {ACTIVATION_PATH}/{link}``: the profile, once."""
ACTIVATION_INFO_PATH = "/api/2.1/unity-catalog/public/data_sharing_activation_info"
"""``GET {ACTIVATION_INFO_PATH}/{link}``: whether the link can still be used (not using it)."""
DEFAULT_LINK_LIFETIME = timedelta(days=7)
LINK_BYTES = 32
MAX_LINK_LENGTH = 128


@dataclass(frozen=True)
class ActivationLink:
    recipient: str
    token: str
    expires_at: int
    """Milliseconds since the epoch."""
    url: str


@dataclass(frozen=True)
class LinkedRecipient:
    """What an unused link leads to: the recipient, its IP access list (checked before the
    link is used up), its token lifetime and where its profile points."""

    name: str
    ip_access_list: tuple[str, ...]
    token_lifetime: timedelta | None
    endpoint: str | None


def activation_url(endpoint: str, token: str) -> str:
    """The link on the origin of the sharing ``endpoint`` the recipient's profile names."""
    parts = urlsplit(endpoint)
    return f"{parts.scheme}://{parts.netloc}{ACTIVATION_PATH}/{token}"


def link_lifetime_problem(seconds: float) -> str | None:
    if not 1 <= seconds <= MAX_DURATION_SECONDS:
        return f"must be between 1 and {MAX_DURATION_SECONDS} seconds (100 years)"
    return None


def new_link(
    tx: Transaction,
    hashed: Callable[[str], str],
    recipient: str,
    lifetime: timedelta,
    endpoint: str,
) -> ActivationLink:
    """A link for ``recipient``, written in ``tx``."""
    problem = link_lifetime_problem(lifetime.total_seconds())
    if problem:
        raise CatalogError(f"the activation link lifetime {problem}")
    token = secrets.token_urlsafe(LINK_BYTES)
    now = _now()
    end = tx.execute("SELECT expires_at FROM recipients WHERE name_key = ?", (name_key(recipient),))
    expires_at = capped(now + int(lifetime.total_seconds() * 1000), end[0][0] if end else None)
    assert expires_at is not None
    tx.execute(
        "INSERT INTO activation_links (hash, recipient_key, created_at, expires_at) "
        "VALUES (?,?,?,?)",
        (hashed(token), name_key(recipient), now, expires_at),
    )
    return ActivationLink(recipient, token, expires_at, activation_url(endpoint, token))


def unused_link(tx: Transaction, hashed: str) -> LinkedRecipient:
    """The recipient of an unused, unexpired link; :class:`CatalogNotFoundError` for a
    link that is unknown, used or expired (the three are not told apart)."""
    rows = tx.execute(
        "SELECT r.name, r.ip_access_list, r.token_lifetime_seconds, r.endpoint "
        "FROM activation_links a JOIN recipients r ON r.name_key = a.recipient_key "
        "WHERE a.hash = ? AND a.used_at IS NULL AND a.expires_at > ?",
        (hashed, _now()),
    )
    if not rows:
        raise CatalogNotFoundError("no such activation link, or it was used or has expired")
    name, ips, seconds, endpoint = rows[0]
    lifetime = None if seconds is None else timedelta(seconds=seconds)
    return LinkedRecipient(name, tuple(json.loads(ips)), lifetime, endpoint)


def use_link(tx: Transaction, hashed: str) -> None:
    """Mark the link used; :class:`CatalogNotFoundError` when another request used it
    first (the update finds no unused row)."""
    used = tx.execute(
        "UPDATE activation_links SET used_at = ? WHERE hash = ? AND used_at IS NULL RETURNING hash",
        (_now(), hashed),
    )
    if not used:
        raise CatalogNotFoundError("no such activation link, or it was used or has expired")


def end_links(tx: Transaction, name: str) -> None:
    """End the recipient's unused links now."""
    now = _now()
    tx.execute(
        "UPDATE activation_links SET expires_at = ? "
        "WHERE recipient_key = ? AND used_at IS NULL AND expires_at > ?",
        (now, name_key(name), now),
    )


def presented_link(token: str) -> str:
    """``token`` if it can be a link at all (refused before it is hashed otherwise)."""
    if not token or len(token) > MAX_LINK_LENGTH:
        raise CatalogNotFoundError("no such activation link, or it was used or has expired")
    return token


def _now() -> int:
    return int(time.time() * 1000)


# -- the store's writes -------------------------------------------------------------------
def unused_links(database: Database) -> dict[str, int]:
    """The recipients (name keys) with an unused, unexpired link, each with when its last
    one expires (milliseconds since the epoch)."""
    rows = database.query(
        "SELECT recipient_key, MAX(expires_at) FROM activation_links "
        "WHERE used_at IS NULL AND expires_at > ? GROUP BY recipient_key",
        (_now(),),
    )
    return {key: expires_at for key, expires_at in rows}


def checked_ip_access_list(entries: Sequence[str], max_entries: int) -> tuple[str, ...]:
    """``entries`` as stored, or :class:`CatalogError` saying why they cannot be."""
    problem = ip_access_problem(entries, max_entries)
    if problem:
        raise CatalogError(f"the IP access list {problem}")
    return normalised(entries)


def insert_recipient(tx: Transaction, name: str, spec: RecipientSpec) -> None:
    """A recipient's row, refused when the name is taken."""
    insert_new(
        tx,
        "INSERT INTO recipients (name_key, name, properties, created_at, endpoint, "
        "token_lifetime_seconds, comment) VALUES (?,?,?,?,?,?,?)",
        (
            name_key(name),
            name,
            json.dumps(dict(spec.properties)),
            _now(),
            spec.endpoint,
            None if spec.token_lifetime is None else int(spec.token_lifetime.total_seconds()),
            spec.comment,
        ),
        f"recipient {name!r} exists already",
    )


def set_access(
    tx: Transaction, name: str, access: RecipientSpec, max_entries: int, kind_names: Sequence[str]
) -> None:
    """Store a new recipient's IP access list, authentication type (checked) and end."""
    stored = checked_ip_access_list(access.ip_access_list, max_entries)
    if access.authentication_type not in kind_names:
        raise CatalogError(
            f"authentication type {access.authentication_type[:80]!r}: use one of "
            + ", ".join(kind_names)
        )
    tx.execute(
        "UPDATE recipients SET ip_access_list = ?, authentication_type = ?, expires_at = ? "
        "WHERE name_key = ?",
        (
            json.dumps(list(stored)),
            access.authentication_type,
            access.expires_at,
            name_key(name),
        ),
    )
