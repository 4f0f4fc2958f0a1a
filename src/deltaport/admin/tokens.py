"""Admin tokens: kept only as SHA-256 hashes, checked in constant time.

A configured token is either the token itself (usually ``${VAR}``, substituted when the
configuration loads) or ``sha256:<hex>`` of it, so a configuration file need not hold the
token at all. Every check hashes the given token and compares it with every configured
hash through :func:`hmac.compare_digest`, so timing reveals neither which token matched
nor how much of one did.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence

HASH_PREFIX = "sha256:"


def token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


class AdminTokens:
    def __init__(self, configured: Sequence[str]) -> None:
        self._hashes = tuple(
            bytes.fromhex(t.removeprefix(HASH_PREFIX))
            if t.startswith(HASH_PREFIX)
            else token_hash(t)
            for t in configured
        )

    def match(self, token: str) -> bytes | None:
        """The configured hash ``token`` matches, or None."""
        given = token_hash(token)
        found = None
        for expected in self._hashes:
            if hmac.compare_digest(given, expected):
                found = expected
        return found

    def is_configured(self, hashed: bytes) -> bool:
        """Whether ``hashed`` is still one of the configured hashes (a session outlives
        nothing that was removed from the configuration)."""
        return any(hmac.compare_digest(hashed, h) for h in self._hashes)

    def name(self, hashed: bytes) -> str:
        """What audit records call the token of ``hashed``: ``token-N`` for the N-th
        configured token (its position in ``admin.tokens``), never the token itself."""
        for i, expected in enumerate(self._hashes):
            if hmac.compare_digest(hashed, expected):
                return f"token-{i + 1}"
        return "unknown"

    def bearer(self, authorization: str | None) -> bytes | None:
        """The hash matched by ``Authorization: Bearer <token>``, or None."""
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        return self.match(token.strip())
