"""Console sessions, kept on the server, and CSRF tokens.

A session cookie holds only a random id (256 bits): nothing in it derives from the admin
token, so a leaked cookie gives nothing to guess a token from. The server keeps, per
session, the SHA-256 of the session id (the id itself is not stored), the hash of the
admin token used to sign in, a random CSRF token and an expiry. A session ends when it
expires, on logout (it is deleted), when its admin token leaves the configuration, and
when the process restarts (the store lives in memory). At most :data:`MAX_SESSIONS` are
kept; past that the oldest is ended.

The login form, before any session, uses a double-submit token: a random value in a
``SameSite=Strict`` cookie that the form must repeat.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from deltaport.admin.tokens import AdminTokens

SESSION_COOKIE = "deltaport_session"
LOGIN_CSRF_COOKIE = "deltaport_login_csrf"
MAX_SESSIONS = 10_000
_MAX_COOKIE = 128


@dataclass(frozen=True)
class Session:
    key: bytes
    """SHA-256 of the session id: how the store knows it."""
    csrf: str
    token_hash: bytes
    """The hash of the admin token that signed in: whom audit records name."""


@dataclass(frozen=True)
class _Entry:
    token_hash: bytes
    csrf: str
    expires_at: float


class Sessions:
    def __init__(
        self,
        tokens: AdminTokens,
        lifetime_seconds: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._tokens = tokens
        self.lifetime = lifetime_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: OrderedDict[bytes, _Entry] = OrderedDict()

    def start(self, token_hash: bytes) -> str:
        """A new session of the admin token hashed ``token_hash``; its cookie value."""
        session_id = secrets.token_urlsafe(32)
        entry = _Entry(token_hash, secrets.token_hex(32), self._clock() + self.lifetime)
        with self._lock:
            self._entries[_key(session_id)] = entry
            while len(self._entries) > MAX_SESSIONS:
                self._entries.popitem(last=False)
        return session_id

    def open(self, cookie: str | None) -> Session | None:
        """The session of ``cookie``; None when absent, unknown, ended or expired."""
        if not cookie or len(cookie) > _MAX_COOKIE:
            return None
        key = _key(cookie)
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            if entry.expires_at <= self._clock() or not self._tokens.is_configured(
                entry.token_hash
            ):
                del self._entries[key]
                return None
        return Session(key, entry.csrf, entry.token_hash)

    def end(self, session: Session) -> None:
        """End ``session`` now: its cookie opens nothing any more."""
        with self._lock:
            self._entries.pop(session.key, None)


def _key(session_id: str) -> bytes:
    return hashlib.sha256(session_id.encode("utf-8", "replace")).digest()


def new_login_csrf() -> str:
    return secrets.token_urlsafe(24)


def same_token(given: str | None, expected: str | None) -> bool:
    """Constant-time comparison that refuses missing values."""
    if not given or not expected:
        return False
    return hmac.compare_digest(given.encode(), expected.encode())
