"""Turning file paths of a Delta log into URLs a recipient can fetch.

Cloud files get pre-signed URLs from their object store (one batch per page); files on
the server's disk get HMAC-signed URLs served by the local file endpoint.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Protocol
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.compute as pc

from deltaport.catalog.model import SharedTable
from deltaport.protocol.errors import InternalError, SharingError
from deltaport.server.answers.line_encoding import json_escaped
from deltaport.server.files.reader_seal import Reader, ReaderSeal
from deltaport.storage import Location, Storage, resolve_log_path
from deltaport.storage.cmac import CmacMessages
from deltaport.storage.local_urls import (
    LocalUrlSigner,
    PreparedPaths,
    Rows,
    invalid_relative_paths,
    join_prepared,
    joined_row_maps,
    raise_first_failure,
)

MAX_EXPIRY_STEP_SECONDS = 60


def url_expiry(lifetime: timedelta, now: float | None = None) -> int:
    """When URLs signed now expire (Unix seconds): ``now + lifetime`` rounded up to a step
    of a tenth of the lifetime (at most 60 s), so the requests of one step get the same
    URLs and a repeated answer can be reused. A URL lives at most lifetime + step."""
    seconds = lifetime.total_seconds()
    step = max(1, min(MAX_EXPIRY_STEP_SECONDS, int(seconds // 10)))
    at = (time.time() if now is None else now) + seconds
    return math.ceil(at / step) * step


@dataclass(frozen=True)
class SignableFiles:
    """The files of one table prepared once for signing (local: HMAC messages and URL
    paths; cloud: object locations), then signed per page and expiry. ``failures`` holds
    the rows that cannot be signed: they fail when signed, not the whole table."""

    local: PreparedPaths | None
    remote: list[Location] | None
    failures: dict[int, Exception]


def join_signable(parts: Sequence[SignableFiles], lengths: Sequence[int]) -> SignableFiles:
    """Preparations of consecutive runs of ``lengths`` files of one table, as one."""
    failures = joined_row_maps([part.failures for part in parts], lengths)
    locals_ = [part.local for part in parts if part.local is not None]
    if len(locals_) == len(parts):
        return SignableFiles(join_prepared(locals_, lengths), None, failures)
    remote = [location for part in parts for location in part.remote or ()]
    return SignableFiles(None, remote, failures)


class UrlSigner(Protocol):
    def sign_files(
        self, table: SharedTable, paths: Sequence[str], expires_in: timedelta
    ) -> list[str]:
        """URLs for ``paths`` as written in the table's log (relative ones URL-encoded)."""
        ...

    def sign_until(self, table: SharedTable, paths: Sequence[str], expires_at: int) -> list[str]:
        """Like :meth:`sign_files`, valid until ``expires_at`` (Unix seconds)."""
        ...

    def prepare(
        self, table: SharedTable, paths: pa.StringArray, messages: CmacMessages | None = None
    ) -> SignableFiles:
        """``paths`` (as in the log) made ready for :meth:`sign_prepared`; ``messages``:
        the same paths laid out for CMAC already (see :class:`CmacMessages`), if at hand."""
        ...

    def sign_prepared(
        self, table: SharedTable, files: SignableFiles, rows: Rows, expires_at: int
    ) -> pa.Array:
        """URLs of the ``rows`` of ``files``, valid until ``expires_at`` (Unix seconds)."""
        ...

    def json_url_pieces(
        self, table: SharedTable, files: SignableFiles, rows: Rows, expires_at: int
    ) -> list[pa.Array | str]:
        """The URLs of :meth:`sign_prepared` as text inside a JSON string (escaped), in
        pieces whose row-wise concatenation is that text."""
        ...

    def unservable(self, table: SharedTable, paths: pa.StringArray) -> dict[int, Exception]:
        """The rows of ``paths`` that can never be signed (a path leaving the table), with
        why: found without signing anything, so that an answer can be refused before it
        starts instead of failing in the middle."""
        ...


class TableUrlSigner:
    """Signs with the object store for cloud tables and with ``local`` for local ones."""

    def __init__(self, local: LocalUrlSigner, seal: ReaderSeal | None = None) -> None:
        self._local = local
        self._seal = seal
        self._storages: dict[str, Storage] = {}
        self._lock = threading.Lock()

    def sign_files(
        self, table: SharedTable, paths: Sequence[str], expires_in: timedelta
    ) -> list[str]:
        return self.sign_until(table, paths, int(time.time() + expires_in.total_seconds()))

    def sign_until(self, table: SharedTable, paths: Sequence[str], expires_at: int) -> list[str]:
        prepared = self.prepare(table, pa.array(paths, pa.string()))
        urls: list[str] = self.sign_prepared(
            table, prepared, range(len(paths)), expires_at
        ).to_pylist()
        return urls

    def prepare(
        self, table: SharedTable, paths: pa.StringArray, messages: CmacMessages | None = None
    ) -> SignableFiles:
        root = table.location
        failures: dict[int, Exception] = {}
        if root.kind == "local":
            relative = _local_relative(root, paths, failures)
            local = self._local.prepare(
                table.key, relative, messages if relative is paths else None
            )
            return SignableFiles(local, None, failures)
        remote = []
        for row, path in enumerate(paths.to_pylist()):
            try:
                remote.append(_resolve(root, path))
            except (SharingError, ValueError) as exc:
                failures[row] = exc
                remote.append(root)
        return SignableFiles(None, remote, failures)

    def sign_prepared(
        self, table: SharedTable, files: SignableFiles, rows: Rows, expires_at: int
    ) -> pa.Array:
        raise_first_failure(files.failures, rows)
        if files.local is not None:
            urls = self._local.sign_prepared(files.local, rows, expires_at)
            suffix = self._reader_suffix(table, expires_at)
            return pc.binary_join_element_wise(urls, suffix, "") if suffix else urls
        assert files.remote is not None
        remote = files.remote
        expires_in = timedelta(seconds=max(1.0, expires_at - time.time()))
        urls = self._storage(table).sign([remote[i] for i in rows], expires_in)
        return pa.array(urls, pa.string())

    def json_url_pieces(
        self, table: SharedTable, files: SignableFiles, rows: Rows, expires_at: int
    ) -> list[pa.Array | str]:
        if files.local is not None and self._local.json_safe:
            raise_first_failure(files.failures, rows)
            pieces: list[pa.Array | str] = list(
                self._local.url_pieces(files.local, rows, expires_at)
            )
            suffix = self._reader_suffix(table, expires_at)
            return [*pieces, suffix] if suffix else pieces
        return [json_escaped(self.sign_prepared(table, files, rows, expires_at))]

    def unservable(self, table: SharedTable, paths: pa.StringArray) -> dict[int, Exception]:
        root = table.location
        failures: dict[int, Exception] = {}
        if root.kind == "local":
            relative = _local_relative(root, paths, failures)
            return {**invalid_relative_paths(relative), **failures}
        for row in pc.indices_nonzero(pc.match_substring(paths, ":")).to_pylist():
            try:
                _resolve(root, paths[row].as_py())
            except (SharingError, ValueError) as exc:
                failures[row] = exc
        return failures

    def _reader_suffix(self, table: SharedTable, expires_at: int) -> str:
        if self._seal is None or table.reader is None:
            return ""
        return self._seal.suffix(table.key, Reader(table.reader, table.credential), expires_at)

    def _storage(self, table: SharedTable) -> Storage:
        with self._lock:
            storage = self._storages.get(table.key)
            if storage is None:
                storage = Storage(table.location, table.storage_options)
                self._storages[table.key] = storage
            return storage


def _local_relative(
    root: Location, paths: pa.StringArray, failures: dict[int, Exception]
) -> pa.StringArray:
    """``paths`` of a local table relative to its root (the same array when they all are
    already); the rows that cannot be made relative go to ``failures``. Only absolute and
    URL-encoded paths need work."""
    data = paths.buffers()[2]
    text = b"" if data is None else data.to_pybytes()
    if b":" not in text and b"%" not in text:
        return paths
    odd = pc.or_(pc.match_substring(paths, ":"), pc.match_substring(paths, "%"))
    texts = paths.to_pylist()
    for row in pc.indices_nonzero(odd).to_pylist():
        try:
            texts[row] = _relative_to_root(root, texts[row])
        except SharingError as exc:
            failures[row] = exc
    return pa.array(texts, pa.string())


def _resolve(root: Location, path: str) -> Location:
    if ":" not in path:
        return root.child(unquote(path) if "%" in path else path)
    return resolve_log_path(root, path)


def _relative_to_root(root: Location, path: str) -> str:
    if ":" not in path:
        return unquote(path) if "%" in path else path
    location = resolve_log_path(root, path)
    base = root.key.rstrip("/") + "/"
    if location.kind != "local" or not location.key.startswith(base):
        raise InternalError("a file of the table lies outside its location and cannot be served")
    return location.key[len(base) :]
