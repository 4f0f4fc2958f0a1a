"""Turning file paths of a Delta log into URLs a recipient can fetch.

Cloud files get pre-signed URLs from their object store (one batch per page); files on
the server's disk get HMAC-signed URLs served by the local file endpoint.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from datetime import timedelta
from typing import Protocol
from urllib.parse import unquote

from deltaport.protocol.errors import InternalError
from deltaport.server.catalog import SharedTable
from deltaport.storage import Location, Storage, resolve_log_path
from deltaport.storage.local_urls import LocalUrlSigner


class UrlSigner(Protocol):
    def sign_files(
        self, table: SharedTable, paths: Sequence[str], expires_in: timedelta
    ) -> list[str]:
        """URLs for ``paths`` as written in the table's log (relative ones URL-encoded)."""
        ...


class TableUrlSigner:
    """Signs with the object store for cloud tables and with ``local`` for local ones."""

    def __init__(self, local: LocalUrlSigner) -> None:
        self._local = local
        self._storages: dict[str, Storage] = {}
        self._lock = threading.Lock()

    def sign_files(
        self, table: SharedTable, paths: Sequence[str], expires_in: timedelta
    ) -> list[str]:
        root = table.location
        if root.kind == "local":
            expires_at = int(time.time() + expires_in.total_seconds())
            relative = [_relative_to_root(root, p) for p in paths]
            return self._local.sign_many(table.key, relative, expires_at)
        locations = [_resolve(root, p) for p in paths]
        return self._storage(table).sign(locations, expires_in)

    def _storage(self, table: SharedTable) -> Storage:
        with self._lock:
            storage = self._storages.get(table.key)
            if storage is None:
                storage = Storage(table.location, table.storage_options)
                self._storages[table.key] = storage
            return storage


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
