"""HMAC-signed URLs for table files on the server's local disk.

A URL looks like ``{base_url}/{table_key}/{relative/path}?se={expiry}&sp=r&sig={hmac}``.
The path parts are percent-encoded, so names holding ``%``, spaces, ``&``, ``+``, ``=`` or
emoji round-trip. The query names follow Azure SAS (``se`` signed expiry, ``sp`` signed
permissions, ``sig`` signature): delta-kernel-rs, and with it the official Python client's
delta-format path, fetches a file over HTTP only when the URL carries a query key it
recognises as a pre-signature (``X-Amz-Signature``, ``sp`` or ``X-Goog-Credential``), and
otherwise treats the URL as a path on a local file system.
"""

from __future__ import annotations

import base64
import hmac
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from urllib.parse import quote

from deltaport.storage.uri import Location

EXPIRY_PARAM = "se"
PERMISSION_PARAM = "sp"
SIGNATURE_PARAM = "sig"
_MIN_SECRET_BYTES = 16


class InvalidSignatureError(PermissionError):
    """A local file URL that is tampered, expired, malformed or names another file."""


class PathEscapeError(PermissionError):
    """A relative path that would leave the table root (``..``, absolute, symlink)."""


class LocalUrlSigner:
    """Signs and verifies URLs of local table files with a server secret."""

    def __init__(self, secret: bytes, base_url: str) -> None:
        if len(secret) < _MIN_SECRET_BYTES:
            raise ValueError(f"the URL signing secret needs at least {_MIN_SECRET_BYTES} bytes")
        self._secret = secret
        self.base_url = base_url.rstrip("/")

    def sign(self, table_key: str, relative_path: str, expires_at: int) -> str:
        """A URL for ``relative_path`` (decoded, ``/``-separated) below the table's root,
        valid until ``expires_at`` (Unix seconds)."""
        return self.sign_many(table_key, [relative_path], expires_at)[0]

    def sign_many(
        self, table_key: str, relative_paths: Sequence[str], expires_at: int
    ) -> list[str]:
        """URLs for many files of one table with one expiry (the per-page batch)."""
        _check_table_key(table_key)
        expiry = str(int(expires_at))
        prefix = f"{self.base_url}/{quote(table_key, safe='')}/"
        suffix = f"?{EXPIRY_PARAM}={expiry}&{PERMISSION_PARAM}=r&{SIGNATURE_PARAM}="
        keyed = hmac.new(self._secret, f"{table_key}\0".encode(), "sha256")
        tail = f"\0{expiry}".encode()
        quoted_dirs: dict[str, str] = {}
        out = []
        for path in relative_paths:
            _check_relative_path(path)
            mac = keyed.copy()
            mac.update(path.encode() + tail)
            directory, _, name = path.rpartition("/")
            quoted_dir = quoted_dirs.get(directory)
            if quoted_dir is None:
                quoted_dir = quoted_dirs[directory] = quote(directory + "/") if directory else ""
            signature = _encode_signature(mac.digest())
            out.append(prefix + quoted_dir + quote(name) + suffix + signature)
        return out

    def verify(
        self,
        table_key: str,
        relative_path: str,
        params: Mapping[str, str],
        now: float | None = None,
    ) -> str:
        """Check a request's query ``params`` against the file it names; returns the path.

        Raises :class:`InvalidSignatureError` when the signature does not match, the expiry
        is missing or past, or the path is not a plain relative path.
        """
        expiry = params.get(EXPIRY_PARAM, "")
        signature = params.get(SIGNATURE_PARAM, "")
        if not (expiry.isascii() and expiry.isdigit()) or not signature.isascii():
            raise InvalidSignatureError("the URL is not signed")
        try:
            _check_table_key(table_key)
            _check_relative_path(relative_path)
        except ValueError as exc:
            raise InvalidSignatureError(str(exc)) from exc
        message = f"{table_key}\0{relative_path}\0{expiry}".encode()
        expected = _encode_signature(hmac.digest(self._secret, message, "sha256"))
        if not hmac.compare_digest(expected, signature):
            raise InvalidSignatureError("the URL signature does not match")
        if int(expiry) < (time.time() if now is None else now):
            raise InvalidSignatureError("the URL has expired")
        return relative_path


def resolve_local_file(root: Location, relative_path: str) -> Path:
    """The real path of ``relative_path`` below the local table ``root``.

    Symlinks are resolved first, so neither ``..`` nor a link pointing outside the root can
    reach a file that is not inside it.
    """
    if root.kind != "local":
        raise ValueError(f"not a local table location: {root.uri}")
    base = Path(root.key).resolve()
    target = (base / relative_path.lstrip("/")).resolve()
    if not target.is_relative_to(base) or target == base:
        raise PathEscapeError("the path leaves the table root")
    return target


def _check_table_key(table_key: str) -> None:
    if not table_key or "/" in table_key or "\0" in table_key:
        raise ValueError("a table key is one non-empty path segment")


def _check_relative_path(path: str) -> None:
    if not path or path.startswith("/") or "\0" in path:
        raise ValueError("a file path must be relative and non-empty")
    if ".." in path and ".." in path.split("/"):
        raise ValueError("a file path must not contain '..' segments")


def _encode_signature(mac: bytes) -> str:
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode()
