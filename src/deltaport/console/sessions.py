"""Console sessions and CSRF tokens, with no state on the server.

A session is a cookie holding a token sealed by :class:`deltaport.server.tokens.TokenSigner`
(MAC-ed, expiring) around a random session id and the hash of the admin token used to log
in: it stops working when it expires or when that token leaves the configuration. The
CSRF token of a session is an HMAC of its id, checked on every POST (session-bound). The
login form, before any session, uses a double-submit token: a random value in a
``SameSite=Strict`` cookie that the form must repeat.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from deltaport.admin.tokens import AdminTokens
from deltaport.protocol.errors import InvalidParameterError
from deltaport.server.tokens import TokenSigner

SESSION_COOKIE = "deltaport_session"
LOGIN_CSRF_COOKIE = "deltaport_login_csrf"
_PURPOSE = "console-session"


@dataclass(frozen=True)
class Session:
    id: str
    csrf: str


class Sessions:
    def __init__(
        self,
        key: bytes,
        tokens: AdminTokens,
        lifetime_seconds: int,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """``clock``: the wall clock (Unix seconds) sessions start and expire by."""
        self._clock = clock
        self._signer = TokenSigner(hmac.digest(key, b"console-sessions", "sha256"))
        self._csrf_key = hmac.digest(key, b"console-csrf", "sha256")
        self._tokens = tokens
        self.lifetime = lifetime_seconds

    def start(self, token_hash: bytes) -> str:
        """A new session's cookie value."""
        payload = [secrets.token_urlsafe(16), token_hash.hex()]
        return self._signer.seal(_PURPOSE, payload, int(self._clock()) + self.lifetime)

    def open(self, cookie: str | None) -> Session | None:
        """The session of ``cookie``; None when absent, altered, expired or revoked."""
        if not cookie:
            return None
        try:
            session_id, token_hash = self._signer.open(
                _PURPOSE, cookie, tuple[str, str], "session", now=self._clock()
            )
            hashed = bytes.fromhex(token_hash)
        except (InvalidParameterError, ValueError):
            return None
        if not self._tokens.is_configured(hashed):
            return None
        return Session(session_id, self._csrf(session_id))

    def _csrf(self, session_id: str) -> str:
        return hmac.digest(self._csrf_key, session_id.encode(), "sha256").hex()


def new_login_csrf() -> str:
    return secrets.token_urlsafe(24)


def same_token(given: str | None, expected: str | None) -> bool:
    """Constant-time comparison that refuses missing values."""
    if not given or not expected:
        return False
    return hmac.compare_digest(given.encode(), expected.encode())
