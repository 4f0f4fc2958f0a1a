"""Recipient bearer tokens: made from :mod:`secrets`, kept only as keyed hashes.

A token carries 256 random bits, so its hash cannot be reversed by guessing; the hash is
keyed (HMAC-SHA256 under a random key kept in the catalog) so that equal tokens of two
catalogs never hash alike. A token is shown once, when it is made, and never again.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import datetime

from deltaport.protocol.errors import UnauthenticatedError

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


def expiry_text(expires_at: int | None) -> str:
    """When a token ends, as local time; a stored value no date can show (written before
    lifetimes were bounded) is shown as its milliseconds since the epoch."""
    if expires_at is None:
        return "never"
    try:
        moment = datetime.fromtimestamp(expires_at / 1000).astimezone()
    except (ValueError, OverflowError, OSError):
        return f"{expires_at} ms after 1970-01-01 UTC"
    return moment.isoformat(timespec="seconds")
