"""Signed, expiring tokens carrying a small payload (page cursors, refresh cursors).

The server keeps no state between requests: everything a follow-up request needs (the
pinned table version, the offset, what the token is bound to) travels in the token,
MAC-ed with a key every replica derives from the same configured ``signingKey``. A token
is ``base64url(msgpack([purpose, expires_at, payload])) "." base64url(mac)``; the purpose
keeps a token of one kind from being accepted as another.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import time
from typing import Any, TypeVar

import msgspec

from deltaport.protocol.errors import InvalidParameterError

T = TypeVar("T")

_MAC_BYTES = 20


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class TokenSigner:
    """Seals payloads into tokens and opens them again, checking MAC, purpose and expiry."""

    def __init__(self, key: bytes) -> None:
        self._key = key

    def _mac(self, body: bytes) -> bytes:
        return hmac.digest(self._key, body, "sha256")[:_MAC_BYTES]

    def seal(self, purpose: str, payload: object, expires_at: int) -> str:
        """A token for ``payload`` valid until ``expires_at`` (Unix seconds)."""
        body = msgspec.msgpack.encode([purpose, expires_at, payload])
        return f"{_b64(body)}.{_b64(self._mac(body))}"

    def open(
        self, purpose: str, token: str, payload_type: type[T], name: str, now: float | None = None
    ) -> T:
        """The payload of ``token``; a 400 naming the parameter ``name`` when the token was
        altered, is of another kind or has expired."""
        body = self._verified_body(token, name)
        try:
            kind, expires_at, raw = msgspec.msgpack.decode(body, type=tuple[str, int, Any])
        except (msgspec.DecodeError, msgspec.ValidationError):
            raise InvalidParameterError(f"{name} is not valid") from None
        if kind != purpose:
            raise InvalidParameterError(f"{name} is not valid for this request")
        if (time.time() if now is None else now) > expires_at:
            raise InvalidParameterError(f"{name} has expired; start the query again")
        try:
            return msgspec.convert(raw, payload_type)
        except msgspec.ValidationError:
            raise InvalidParameterError(f"{name} is not valid") from None

    def _verified_body(self, token: str, name: str) -> bytes:
        body_text, sep, mac_text = token.partition(".")
        try:
            body, mac = _unb64(body_text), _unb64(mac_text)
        except (binascii.Error, ValueError):
            body, mac = b"", b""
        if not sep or not body or not hmac.compare_digest(mac, self._mac(body)):
            raise InvalidParameterError(
                f"{name} is not valid (altered or issued by another server)"
            )
        return body
