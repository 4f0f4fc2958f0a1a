"""Activation links: a recipient's credentials handed over by a single-use URL instead of
a file.

A recipient created with a link gets no token then: the first download of the link issues
it (in the transaction that marks the link used) and answers the profile, so the catalog
never holds a secret it could show twice. A link is 256 random bits, kept only as a keyed
hash like a token; it is used once, and expires unused after its lifetime.

The link is the path of Unity Catalog's public activation route (what the Databricks
SDK's ``recipient_activation.retrieve_token`` calls) on the sharing listener's origin.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import urlsplit

from deltaport.catalog.database import Transaction
from deltaport.catalog.limits import MAX_DURATION_SECONDS
from deltaport.catalog.rows import CatalogError, CatalogNotFoundError
from deltaport.protocol.names import name_key

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
    expires_at = now + int(lifetime.total_seconds() * 1000)
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


def presented_link(token: str) -> str:
    """``token`` if it can be a link at all (refused before it is hashed otherwise)."""
    if not token or len(token) > MAX_LINK_LENGTH:
        raise CatalogNotFoundError("no such activation link, or it was used or has expired")
    return token


def _now() -> int:
    return int(time.time() * 1000)
