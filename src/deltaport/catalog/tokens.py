"""Recipient bearer tokens: made from :mod:`secrets`, kept only as keyed hashes.

A token carries 256 random bits, so its hash cannot be reversed by guessing; the hash is
keyed (HMAC-SHA256 under a random key kept in the catalog) so that equal tokens of two
catalogs never hash alike. A token is shown once, when it is made, and never again.
"""

from __future__ import annotations

import hmac
import secrets

TOKEN_PREFIX = "dpt_"
TOKEN_BYTES = 32


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(TOKEN_BYTES)


def token_hash(key: bytes, token: str) -> str:
    return hmac.digest(key, token.encode(), "sha256").hex()
