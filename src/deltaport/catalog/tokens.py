"""A recipient's credentials: bearer tokens, and OAuth clients with the access tokens the
sharing listener's token endpoint issues for them (client-credentials grant, RFC 6749 4.4).

A token or a client secret carries 256 random bits (from :mod:`secrets`), so its hash
cannot be reversed by guessing; only that hash is kept, keyed (HMAC-SHA256 under a random
key kept in the catalog) so that equal secrets of two catalogs never hash alike. A secret is
shown once, when it is made, and never again.

An OAuth access token is not stored at all: it names its client and its expiry under a MAC
keyed from the server's signing key mixed with the catalog's own key (see
:class:`~deltaport.catalog.live.live_catalog.LiveCatalog`), so every replica with the same
signing key on the catalog can check it and a copy of the catalog alone cannot make one; it
ends early when its client is revoked or expires (a rotation ends the old client after its
grace period, as it ends old bearer tokens).

A ``TOKEN`` recipient has bearer tokens, an ``OAUTH_CLIENT_CREDENTIALS`` one OAuth clients;
both are issued, ended after a grace period and revoked alike (:func:`issue`,
:func:`end_by`, :func:`revoke_all`).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from deltaport.catalog.database.connection import Database, Transaction
from deltaport.catalog.rows import KEEP, CatalogNotFoundError, IssuedToken, Keep, capped
from deltaport.catalog.store_checks import now_ms as _now
from deltaport.catalog.store_checks import seconds
from deltaport.protocol.errors import UnauthenticatedError
from deltaport.protocol.names import name_key

TOKEN_PREFIX = "dpt_"
TOKEN_BYTES = 32
MAX_TOKEN_LENGTH = 1024
"""The longest bearer token a server looks at (a deltaport token has 47 characters): a
longer one is refused before it is hashed or compared."""


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(TOKEN_BYTES)


def token_hash(key: bytes, token: str) -> str:
    return hmac.digest(key, token.encode(), "sha256").hex()


def credential_id(hashed: str) -> str:
    """A short public name of the token whose hash is ``hashed``: what page tokens, refresh
    tokens and file URLs are bound to. It reveals neither the token nor its hash."""
    return hashlib.sha256(f"credential\0{hashed}".encode()).hexdigest()[:16]


def presented_token(authorization: str | None) -> str:
    """The token of an ``Authorization: Bearer <token>`` header; 401 when there is none or
    it is longer than :data:`MAX_TOKEN_LENGTH`."""
    scheme, _, token = (authorization or "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise UnauthenticatedError("missing bearer token")
    if len(token) > MAX_TOKEN_LENGTH:
        raise UnauthenticatedError(
            f"the bearer token is longer than {MAX_TOKEN_LENGTH} characters; it is not valid"
        )
    return token


# -- OAuth clients and access tokens ----------------------------------------------------
TOKEN = "TOKEN"
OAUTH = "OAUTH_CLIENT_CREDENTIALS"
AUTHENTICATION_TYPES = (TOKEN, OAUTH)
"""How a recipient authenticates (Unity Catalog's names)."""
CLIENT_PREFIX = "dpc_"
SECRET_PREFIX = "dps_"
ACCESS_TOKEN_PREFIX = "dpa_"
TOKEN_ENDPOINT_PATH = "/oauth/token"
"""Under the sharing endpoint: ``{endpoint}/oauth/token``."""
DEFAULT_ACCESS_TOKEN_SECONDS = 3600
"""The official client renews a token with less than 600 s left, so a lifetime must be
well above that."""


def new_client_id() -> str:
    return CLIENT_PREFIX + secrets.token_urlsafe(16)


def new_secret() -> str:
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def client_credential(client_id: str) -> str:
    """The public name of a client as a credential (page tokens and file URLs are bound to
    it, as to a bearer token's :func:`~deltaport.catalog.tokens.credential_id`)."""
    return hashlib.sha256(f"oauth-client\0{client_id}".encode()).hexdigest()[:16]


class AccessTokens:
    """Access tokens ``dpa_<client id>.<expiry, epoch seconds>.<MAC>``."""

    def __init__(self, key: bytes) -> None:
        self._key = key

    def issue(self, client_id: str, expires_at: int) -> str:
        body = f"{ACCESS_TOKEN_PREFIX}{client_id}.{expires_at}"
        return f"{body}.{self._mac(body)}"

    def client_of(self, token: str, now: float) -> str:
        """The client a valid, unexpired access token was issued to; 401 otherwise."""
        body, _, mac = token.rpartition(".")
        client_part, _, expiry = body.rpartition(".")
        if not (body and hmac.compare_digest(mac, self._mac(body))):
            raise UnauthenticatedError("the bearer token is not valid")
        if not expiry.isdigit() or int(expiry) <= now:
            raise UnauthenticatedError(
                "the OAuth access token has expired; fetch a new one from the token endpoint"
            )
        return client_part.removeprefix(ACCESS_TOKEN_PREFIX)

    def _mac(self, body: str) -> str:
        return hmac.digest(self._key, body.encode(), "sha256").hex()


# -- issuing, ending and revoking either kind ------------------------------------------
Hasher = Callable[[str], str]
_TABLES = ("tokens", "oauth_clients")


def issue(
    tx: Transaction, hashed: Hasher, name: str, expires_in: timedelta | None, endpoint: str | None
) -> IssuedToken:
    """A new credential of the recipient's kind: a token, or a client id and secret, living
    ``expires_in`` but never past the recipient's own end."""
    found = tx.execute(
        "SELECT authentication_type, expires_at FROM recipients WHERE name_key = ?",
        (name_key(name),),
    )
    if not found:
        raise CatalogNotFoundError(f"no recipient {name!r}")
    now = _now()
    lived = None if expires_in is None else now + int(expires_in.total_seconds() * 1000)
    expires_at = capped(lived, found[0][1])
    if found[0][0] == OAUTH:
        client_id, secret = new_client_id(), new_secret()
        tx.execute(
            "INSERT INTO oauth_clients (client_id, secret_hash, recipient_key, created_at, "
            "expires_at) VALUES (?,?,?,?,?)",
            (client_id, hashed(secret), name_key(name), now, expires_at),
        )
        return IssuedToken(name, secret, expires_at, endpoint, client_id)
    token = new_token()
    tx.execute(
        "INSERT INTO tokens (hash, recipient_key, created_at, expires_at) VALUES (?,?,?,?)",
        (hashed(token), name_key(name), now, expires_at),
    )
    return IssuedToken(name, token, expires_at, endpoint)


def end_by(tx: Transaction, name: str, deadline: int) -> None:
    """The recipient's live credentials end at ``deadline`` (ms) at the latest."""
    for table in _TABLES:
        tx.execute(
            f"UPDATE {table} SET expires_at = ? WHERE recipient_key = ? AND revoked_at IS NULL "
            "AND (expires_at IS NULL OR expires_at > ?)",
            (deadline, name_key(name), deadline),
        )


def rotation(
    tx: Transaction,
    name: str,
    old_valid_for: timedelta,
    expires_in: timedelta | Keep | None,
    endpoint: str | None,
    default_endpoint: str | None,
) -> tuple[timedelta | None, str | None]:
    """End the recipient's credentials after ``old_valid_for``, and set the lifetime and
    the endpoint of its next (``KEEP``: its own lifetime; no ``endpoint``: its own, else
    ``default_endpoint``); returns both."""
    found = tx.execute(
        "SELECT endpoint, token_lifetime_seconds FROM recipients WHERE name_key = ?",
        (name_key(name),),
    )
    if not found:
        raise CatalogNotFoundError(f"no recipient {name!r}")
    kept_endpoint, kept_seconds = found[0]
    lifetime = (
        (None if kept_seconds is None else timedelta(seconds=kept_seconds))
        if expires_in is KEEP
        else expires_in
    )
    points_to = endpoint or kept_endpoint or default_endpoint
    end_by(tx, name, _now() + int(old_valid_for.total_seconds() * 1000))
    tx.execute(
        "UPDATE recipients SET endpoint = ?, token_lifetime_seconds = ? WHERE name_key = ?",
        (points_to, seconds(lifetime), name_key(name)),
    )
    return lifetime, points_to


def revoke_all(tx: Transaction, name: str) -> None:
    for table in _TABLES:
        tx.execute(
            f"UPDATE {table} SET revoked_at = ? WHERE recipient_key = ? AND revoked_at IS NULL",
            (_now(), name_key(name)),
        )


@dataclass(frozen=True)
class Expiring:
    """A credential that ends soon: whose, which kind, when (milliseconds since the epoch);
    nothing that names or derives from the secret."""

    recipient: str
    kind: str
    """``token``, ``OAuth client`` or ``activation link``."""
    expires_at: int


def expiring(database: Database, since: int, until: int, limit: int) -> list[Expiring]:
    """The first ``limit`` live tokens, OAuth clients and unused activation links that
    expire in ``[since, until)``, the soonest first."""
    live = "expires_at >= ? AND expires_at < ?"
    rows = database.query(
        "SELECT r.name, c.kind, c.expires_at FROM ("
        f"SELECT recipient_key, 'token' AS kind, expires_at FROM tokens "
        f"WHERE revoked_at IS NULL AND {live} UNION ALL "
        f"SELECT recipient_key, 'OAuth client', expires_at FROM oauth_clients "
        f"WHERE revoked_at IS NULL AND {live} UNION ALL "
        f"SELECT recipient_key, 'activation link', expires_at FROM activation_links "
        f"WHERE used_at IS NULL AND {live}"
        ") c JOIN recipients r ON r.name_key = c.recipient_key "
        "ORDER BY c.expires_at, r.name_key LIMIT ?",
        (since, until) * 3 + (limit,),
    )
    return [Expiring(name, kind, int(at)) for name, kind, at in rows]
