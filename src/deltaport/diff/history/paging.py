"""Page tokens: opaque to callers, checked on the way back in.

A token pins what the first page saw (base version and both heads) so later pages list
the same diff even when the tables gain commits meanwhile, and names the next version to
list. A checksum catches altered tokens and a fingerprint tokens of another diff; this is
integrity against mistakes, not a security boundary.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass

import msgspec

from deltaport.diff.base.errors import InvalidPageTokenError

_TOKEN_VERSION = 1


class _Payload(msgspec.Struct, forbid_unknown_fields=True):
    v: int
    fingerprint: str
    base: int | None
    left_head: int | None
    right_head: int | None
    next_version: int


@dataclass(frozen=True)
class PageState:
    """Where the next page starts (``next_version``, listing downwards) and what it pins."""

    base_version: int | None
    left_head: int | None
    right_head: int | None
    next_version: int


def diff_fingerprint(left_uri: str, right_uri: str) -> str:
    return hashlib.sha256(f"{left_uri}\n{right_uri}".encode()).hexdigest()[:16]


def encode_page_token(state: PageState, fingerprint: str) -> str:
    payload = msgspec.json.encode(
        _Payload(
            _TOKEN_VERSION,
            fingerprint,
            state.base_version,
            state.left_head,
            state.right_head,
            state.next_version,
        )
    )
    body = base64.urlsafe_b64encode(payload + b"." + _checksum(payload)).decode()
    return body.rstrip("=")


def decode_page_token(token: str, fingerprint: str) -> PageState:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except (binascii.Error, ValueError) as exc:
        raise InvalidPageTokenError("page token is not valid base64") from exc
    payload, sep, checksum = raw.rpartition(b".")
    if not sep or checksum != _checksum(payload):
        raise InvalidPageTokenError("page token is corrupt or was altered")
    try:
        decoded = msgspec.json.decode(payload, type=_Payload)
    except msgspec.DecodeError as exc:
        raise InvalidPageTokenError("page token is malformed") from exc
    if decoded.v != _TOKEN_VERSION:
        raise InvalidPageTokenError("page token is from another deltaport version")
    if decoded.fingerprint != fingerprint:
        raise InvalidPageTokenError("page token belongs to a diff of other tables")
    if decoded.next_version < 0:
        raise InvalidPageTokenError("page token is malformed")
    return PageState(decoded.base, decoded.left_head, decoded.right_head, decoded.next_version)


def _checksum(payload: bytes) -> bytes:
    return hashlib.sha256(b"deltaport-diff-page\n" + payload).hexdigest()[:16].encode()
