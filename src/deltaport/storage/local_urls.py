"""Signed URLs for table files on the server's local disk.

A URL looks like ``{base_url}/{table_key}/{relative/path}?se={expiry}&sp=r&sig={mac}``.
The path parts are percent-encoded (all but ``=``, legal in a path and in nearly every
partitioned table's paths), so names holding ``%``, spaces, ``&``, ``+``, ``=`` or emoji
round-trip. The query names follow Azure SAS (``se`` signed expiry, ``sp`` signed
permissions, ``sig`` signature): delta-kernel-rs, and with it the official Python client's
delta-format path, fetches a file over HTTP only when the URL carries a query key it
recognises as a pre-signature (``X-Amz-Signature``, ``sp`` or ``X-Goog-Credential``), and
otherwise treats the URL as a path on a local file system.

The signature is ``AES-256(K, D)`` in hex, with ``K = HMAC-SHA256(secret, expiry, table
key)`` (a key per table and expiry step) and ``D`` the AES-CMAC of the path under a key
derived from the secret. The digests ``D`` of a snapshot's paths are computed once, for all
of them together (:func:`~deltaport.storage.cmac.cmacs`), and a page of files is then
signed with one AES call: one HMAC call per file costs ten times more. Both steps are
pseudorandom functions keyed by the secret, so a valid signature for a path the server did
not sign cannot be made without the secret; a signature is bound to its table and expiry
through ``K``.
"""

from __future__ import annotations

import hmac
import itertools
import json
import os
import stat
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypeVar
from urllib.parse import quote

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from deltaport.storage.cmac import BLOCK_BYTES, CmacMessages, cmac, cmacs, hex_strings
from deltaport.storage.uri import Location

EXPIRY_PARAM = "se"
PERMISSION_PARAM = "sp"
SIGNATURE_PARAM = "sig"
_MIN_SECRET_BYTES = 16
_CIPHERS_KEPT = 256
_SAFE = "/="
"""Characters left as they are in URL paths besides letters, digits and ``_.-~``: ``=`` is
legal in a path segment (RFC 3986), and Hive-style partition directories (``p=1/``) hold
one in nearly every path; the server decodes paths either way."""
_UNQUOTED = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~" + _SAFE.encode()
"""What ``quote(path, safe=_SAFE)`` leaves as it is."""
_NOT_PRINTABLE_ASCII = r"[^\x20-\x7e]"

Rows = Sequence[int] | npt.NDArray[np.int64]
"""Row numbers of prepared files."""


def row_range(rows: Rows) -> range | None:
    """``rows`` as a range when they are consecutive ascending numbers (the common case of
    whole snapshots and pages), so a slice can replace a gather."""
    if isinstance(rows, range):
        return rows if rows.step == 1 or len(rows) < 2 else None
    index = np.asarray(rows, dtype=np.int64)
    if not len(index):
        return range(0)
    first = int(index[0])
    if int(index[-1]) - first != len(index) - 1 or not bool(np.all(np.diff(index) == 1)):
        return None
    return range(first, first + len(index))


def gathered(values: pa.Array, rows: Rows) -> pa.Array:
    """The ``rows`` of ``values``: a zero-copy slice when they are consecutive."""
    run = row_range(rows)
    if run is not None:
        return values.slice(run.start, len(run))
    return values.take(pa.array(np.asarray(rows, dtype=np.int64)))


class InvalidSignatureError(PermissionError):
    """A local file URL that is tampered, expired, malformed or names another file."""


class PathEscapeError(PermissionError):
    """A relative path that would leave the table root (``..``, absolute, symlink)."""


@dataclass(frozen=True)
class PreparedPaths:
    """Files of one table ready to sign repeatedly: the keyed digests of their paths (16
    bytes each), and their URLs up to the query as the table's URL prefix followed by
    each quoted path (all independent of the expiry)."""

    table_key: str
    digests: bytes
    url_prefix: str
    quoted_paths: pa.StringArray
    invalid: Mapping[int, ValueError]


def join_prepared(parts: Sequence[PreparedPaths], lengths: Sequence[int]) -> PreparedPaths:
    """Preparations of consecutive runs of ``lengths`` files of one table, as one."""
    return PreparedPaths(
        parts[0].table_key,
        b"".join(part.digests for part in parts),
        parts[0].url_prefix,
        pa.concat_arrays([part.quoted_paths for part in parts]),
        joined_row_maps([part.invalid for part in parts], lengths),
    )


E = TypeVar("E")


def joined_row_maps(maps: Sequence[Mapping[int, E]], lengths: Sequence[int]) -> dict[int, E]:
    """Per-row entries of consecutive runs of ``lengths`` rows, renumbered as one run."""
    starts = itertools.accumulate(lengths, initial=0)
    return {
        start + row: entry
        for entries, start in zip(maps, starts, strict=False)
        for row, entry in entries.items()
    }


def raise_first_failure(failures: Mapping[int, Exception], rows: Rows) -> None:
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
        self._path_key = hmac.digest(secret, b"deltaport local file path digests", "sha256")
        self._ciphers: dict[tuple[str, str], Cipher[modes.ECB]] = {}
        """The cipher of each recent (table, expiry): the URLs of one expiry step share it."""
        self.base_url = base_url.rstrip("/")
        self.json_safe = json.dumps(self.base_url, ensure_ascii=False)[1:-1] == self.base_url
        """Whether URLs need no escaping inside a JSON string (the path and query parts
        are percent-encoded or hex; only the base URL could hold ``"`` or ``\\``)."""

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

    def prepare(
        self,
        table_key: str,
        relative_paths: pa.StringArray,
        messages: CmacMessages | None = None,
    ) -> PreparedPaths:
        """Check and encode the files of a table once, to sign them many times. A path
        that cannot be signed only fails when its row is signed. ``messages``: the paths
        laid out for CMAC already (shared with their file ids)."""
        _check_table_key(table_key)
        return PreparedPaths(
            table_key,
            cmacs(self._path_key, relative_paths if messages is None else messages),
            f"{self.base_url}/{quote(table_key, safe='')}/",
            quote_paths(relative_paths),
            invalid_relative_paths(relative_paths),
        )

    def sign_prepared(self, prepared: PreparedPaths, rows: Rows, expires_at: int) -> pa.StringArray:
        """Signed URLs of the ``rows`` of ``prepared``, valid until ``expires_at``."""
        return pc.binary_join_element_wise(*self.url_pieces(prepared, rows, expires_at), "")

    def url_pieces(
        self, prepared: PreparedPaths, rows: Rows, expires_at: int
    ) -> tuple[str, pa.Array, str, pa.StringArray]:
        """The signed URLs of :meth:`sign_prepared` in pieces to join row-wise: the table's
        URL prefix, the quoted paths, the query up to the signature, and the signatures
        (joined by the caller with the rest of its text, in one pass)."""
        raise_first_failure(prepared.invalid, rows)
        expiry = str(int(expires_at))
        run = row_range(rows)
        if run is not None:
            rows = run  # found consecutive once: the URL paths below are sliced too
            digests = prepared.digests[run.start * BLOCK_BYTES : run.stop * BLOCK_BYTES]
        else:
            table = np.frombuffer(prepared.digests, np.uint8).reshape(-1, BLOCK_BYTES)
            digests = table[np.asarray(rows, dtype=np.int64)].tobytes()
        signature_array = hex_strings(self._macs(prepared.table_key, expiry, digests))
        query = f"?{EXPIRY_PARAM}={expiry}&{PERMISSION_PARAM}=r&{SIGNATURE_PARAM}="
        paths = gathered(prepared.quoted_paths, rows)
        return prepared.url_prefix, paths, query, signature_array

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
            (table_key + relative_path).encode()
        except UnicodeEncodeError:  # a lone surrogate: no URL this server signed
            raise InvalidSignatureError("the URL names a path that is not UTF-8") from None
        except ValueError as exc:
            raise InvalidSignatureError(str(exc)) from exc
        digest = cmac(self._path_key, relative_path.encode())
        expected = self._macs(table_key, expiry, digest).hex()
        if not hmac.compare_digest(expected, signature):
            raise InvalidSignatureError("the URL signature does not match")
        if int(expiry) < (time.time() if now is None else now):
            raise InvalidSignatureError("the URL has expired")
        return relative_path

    def _macs(self, table_key: str, expiry: str, digests: bytes) -> bytes:
        """The MACs of path ``digests`` (16 bytes each) for one table and expiry."""
        cipher = self._ciphers.get((table_key, expiry))
        if cipher is None:
            key = hmac.digest(self._secret, f"{expiry}\0{table_key}".encode(), "sha256")
            cipher = Cipher(algorithms.AES(key), modes.ECB())
            if len(self._ciphers) >= _CIPHERS_KEPT:
                self._ciphers.clear()
            self._ciphers[(table_key, expiry)] = cipher
        encryptor = cipher.encryptor()
        return encryptor.update(digests) + encryptor.finalize()


def quote_paths(paths: pa.StringArray) -> pa.Array:
    """``quote(path, safe=_SAFE)`` of each path: string replacements over the whole column
    for the printable ASCII characters to encode (``%``, space, ``&``, ``#``, ...), ``quote()``
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
        one_by_one = iter([quote(t, safe=_SAFE) for t in texts])
        rows = odd.to_pylist()
        quoted = pc.if_else(
            odd, pa.array([next(one_by_one) if o else None for o in rows], pa.string()), quoted
        )
    return quoted


def invalid_relative_paths(paths: pa.StringArray) -> dict[int, ValueError]:
    """The rows whose path :func:`_check_relative_path` rejects, with its error (found
    with byte searches over the column; only suspect rows are checked one by one)."""
    count = len(paths)
    _, offsets_buffer, data = paths.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=np.int32)[paths.offset : paths.offset + count + 1]
    text = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    starts, ends = offsets[:-1], offsets[1:]
    suspect = ends == starts
    if len(text):
        suspect |= text[np.minimum(starts, len(text) - 1)] == ord("/")
        # a ".." segment ends its path or comes before a "/": look at the bytes before
        # each "/" (a byte search for ".." is slow on names full of dots)
        suspect |= _dots_before(text, ends)
        used = text[offsets[0] : offsets[-1]]
        slashes = np.flatnonzero(used == ord("/")) + int(offsets[0])
        if b"\0" in used.tobytes() or bool(_dots_before(text, slashes).any()):
            suspect |= np.asarray(
                pc.or_(pc.match_substring(paths, "\0"), pc.match_substring(paths, "../")),
                dtype=bool,
            )
    invalid: dict[int, ValueError] = {}
    for row in np.flatnonzero(suspect).tolist():
        try:
            _check_relative_path(paths[row].as_py())
        except ValueError as exc:
            invalid[row] = exc
    return invalid


def _dots_before(
    text: npt.NDArray[np.uint8], positions: npt.NDArray[np.signedinteger[Any]]
) -> npt.NDArray[np.bool_]:
    """Whether the two bytes before each of ``positions`` in ``text`` are dots."""
    dots: npt.NDArray[np.bool_] = (
        (positions >= 2)
        & (text[np.maximum(positions - 1, 0)] == ord("."))
        & (text[np.maximum(positions - 2, 0)] == ord("."))
    )
    return dots


def resolve_local_file(root: Location, relative_path: str) -> str:
    """The real path of ``relative_path`` below the local table ``root``.

    Symlinks are resolved first, so neither ``..`` nor a link pointing outside the root can
    reach a file that is not inside it. The common case, a plain path with no link below
    the root, costs one ``lstat`` per path segment; anything else is fully resolved.
    """
    if root.kind != "local":
        raise ValueError(f"not a local table location: {root.uri}")
    base = _real_root(root.key)
    relative = relative_path.lstrip("/")
    parts = relative.split("/")
    if all(part not in _SPECIAL_SEGMENTS for part in parts):
        target = base
        try:
            for part in parts:
                target = os.path.join(target, part)
                if stat.S_ISLNK(os.lstat(target).st_mode):
                    break
            else:
                return target
        except OSError:
            pass  # a missing segment: resolved below, and the caller finds no file
    resolved = os.path.realpath(os.path.join(base, relative))
    if os.path.commonpath([base, resolved]) != base or resolved == base:
        raise PathEscapeError("the path leaves the table root")
    return resolved


_SPECIAL_SEGMENTS = frozenset(["", ".", ".."])


@lru_cache(maxsize=1024)
def _real_root(key: str) -> str:
    """The real path of a table root (resolved once: the served roots are fixed)."""
    return os.path.realpath(key)


def _check_table_key(table_key: str) -> None:
    if not table_key or "/" in table_key or "\0" in table_key:
        raise ValueError("a table key is one non-empty path segment")


def _check_relative_path(path: str) -> None:
    if not path or path.startswith("/") or "\0" in path:
        raise ValueError("a file path must be relative and non-empty")
    if ".." in path and ".." in path.split("/"):
        raise ValueError("a file path must not contain '..' segments")
