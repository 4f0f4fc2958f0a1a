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
import binascii
import hmac
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from deltaport.storage.uri import Location

EXPIRY_PARAM = "se"
PERMISSION_PARAM = "sp"
SIGNATURE_PARAM = "sig"
_MIN_SECRET_BYTES = 16
_SIGNATURE_CHARS = 43  # unpadded URL-safe base64 of a SHA-256 MAC
_URL_SAFE = bytes.maketrans(b"+/", b"-_")
_UNQUOTED = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~/"
"""What ``quote()`` leaves as it is in a path."""
_NOT_PRINTABLE_ASCII = r"[^\x20-\x7e]"


class InvalidSignatureError(PermissionError):
    """A local file URL that is tampered, expired, malformed or names another file."""


class PathEscapeError(PermissionError):
    """A relative path that would leave the table root (``..``, absolute, symlink)."""


@dataclass(frozen=True)
class PreparedPaths:
    """Files of one table ready to sign repeatedly: each file's HMAC message up to the
    expiry, and its URL up to the query (both independent of the expiry)."""

    messages: list[bytes]
    url_paths: pa.StringArray
    invalid: Mapping[int, ValueError]


def raise_first_failure(failures: Mapping[int, Exception], rows: Sequence[int]) -> None:
    """Raise the failure recorded for the first of ``rows`` that has one."""
    if failures:
        for row in rows:
            failure = failures.get(row)
            if failure is not None:
                raise failure


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
        prepared = self.prepare(table_key, pa.array(relative_paths, pa.string()))
        urls: list[str] = self.sign_prepared(
            prepared, range(len(relative_paths)), expires_at
        ).to_pylist()
        return urls

    def prepare(self, table_key: str, relative_paths: pa.StringArray) -> PreparedPaths:
        """Check and encode the files of a table once, to sign them many times. A path
        that cannot be signed only fails when its row is signed."""
        _check_table_key(table_key)
        messages = pc.binary_join_element_wise(f"{table_key}\0", relative_paths, "")
        prefix = f"{self.base_url}/{quote(table_key, safe='')}/"
        return PreparedPaths(
            messages.cast(pa.binary()).to_pylist(),
            pc.binary_join_element_wise(prefix, quote_paths(relative_paths), ""),
            _invalid_paths(relative_paths),
        )

    def sign_prepared(
        self, prepared: PreparedPaths, rows: Sequence[int], expires_at: int
    ) -> pa.StringArray:
        """Signed URLs of the ``rows`` of ``prepared``, valid until ``expires_at``."""
        raise_first_failure(prepared.invalid, rows)
        expiry = str(int(expires_at))
        tail = f"\0{expiry}".encode()
        secret, digest, b2a = self._secret, hmac.digest, binascii.b2a_base64
        messages = prepared.messages
        macs = [
            b2a(digest(secret, messages[i] + tail, "sha256"), newline=False)[:_SIGNATURE_CHARS]
            for i in rows
        ]
        count = len(macs)
        offsets = np.arange(0, (count + 1) * _SIGNATURE_CHARS, _SIGNATURE_CHARS, dtype=np.int32)
        signatures = pa.StringArray.from_buffers(
            count, pa.py_buffer(offsets), pa.py_buffer(b"".join(macs).translate(_URL_SAFE))
        )
        query = f"?{EXPIRY_PARAM}={expiry}&{PERMISSION_PARAM}=r&{SIGNATURE_PARAM}="
        paths = prepared.url_paths.take(pa.array(rows, pa.int64()))
        return pc.binary_join_element_wise(paths, query, signatures, "")

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


def quote_paths(paths: pa.StringArray) -> pa.Array:
    """``quote(path)`` of each path: string replacements over the whole column for the
    printable ASCII characters to encode (``part=1/...`` needs ``=`` encoded), ``quote()``
    one by one for paths holding other characters."""
    data = paths.buffers()[2]
    unsafe = set((data.to_pybytes() if data is not None else b"").translate(None, _UNQUOTED))
    quoted = paths
    for byte in sorted(unsafe, key=lambda b: b != ord("%")):  # "%" first: it starts escapes
        if 0x20 <= byte <= 0x7E:
            quoted = pc.replace_substring(quoted, chr(byte), f"%{byte:02X}")
    if any(byte < 0x20 or byte > 0x7E for byte in unsafe):
        odd = pc.match_substring_regex(paths, _NOT_PRINTABLE_ASCII)
        texts = paths.filter(odd).to_pylist()
        one_by_one = iter([quote(t) for t in texts])
        rows = odd.to_pylist()
        quoted = pc.if_else(
            odd, pa.array([next(one_by_one) if o else None for o in rows], pa.string()), quoted
        )
    return quoted


def _invalid_paths(paths: pa.StringArray) -> dict[int, ValueError]:
    """The rows whose path :func:`_check_relative_path` rejects, with its error (found
    with byte searches over the column; only suspect rows are checked one by one)."""
    count = len(paths)
    _, offsets_buffer, data = paths.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=np.int32)[paths.offset : paths.offset + count + 1]
    text = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    starts, ends = offsets[:-1], offsets[1:]
    first = text[np.minimum(starts, max(len(text) - 1, 0))] if len(text) else np.zeros(count)
    suspect = (ends == starts) | (first == ord("/"))
    raw = text.tobytes()
    if b"\0" in raw or b".." in raw:
        suspect |= np.asarray(
            pc.or_(pc.match_substring(paths, "\0"), pc.match_substring(paths, "..")),
            dtype=bool,
        )
    invalid: dict[int, ValueError] = {}
    for row in np.flatnonzero(suspect).tolist():
        try:
            _check_relative_path(paths[row].as_py())
        except ValueError as exc:
            invalid[row] = exc
    return invalid


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
