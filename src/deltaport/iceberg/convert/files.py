"""Where the Iceberg files readers open (metadata JSON, manifest lists, manifests, Puffin
files) are written: a directory on the server's disk for a local table, and for a cloud
table a folder under the table's own location (``_deltaport_iceberg/``), which the
table-scoped credentials vended for directory access already reach.

The server's own bookkeeping (which versions and manifests were built, field ids) stays on
its disk in either case: only what readers open goes to the table's store."""

from __future__ import annotations

import threading
from pathlib import Path

from deltaport.storage import ObjectInfo, Storage
from deltaport.storage.uri import Location

METADATA_FOLDER = "metadata"
"""The folder of the table metadata JSON files, under the root."""

CLOUD_FOLDER = "_deltaport_iceberg"
"""The folder under a cloud table's location holding its Iceberg files (Delta ignores
folders whose names start with an underscore)."""


class MetadataFiles:
    """Files written once under one folder of a storage root, named relative to it
    (``data-<digest>.avro``, ``metadata/<name>.metadata.json``)."""

    def __init__(self, storage: Storage, folder: str = "", *, remember: bool = False) -> None:
        self._storage = storage
        self._folder = folder
        self._root = storage.root.child(folder) if folder else storage.root
        self._remember = remember
        self._known: set[str] = set()
        self._lock = threading.Lock()

    @classmethod
    def local(cls, directory: Path) -> MetadataFiles:
        return cls(Storage(str(directory)))

    @classmethod
    def cloud(cls, table: Location, options: dict[str, str]) -> MetadataFiles:
        return cls(Storage(table, options), CLOUD_FOLDER, remember=True)

    def path(self, name: str) -> str:
        """How readers name the file: an absolute path on local disk, else its URI."""
        return reader_path(self._root.child(name))

    def exists(self, name: str, *, remembered: bool = True) -> bool:
        """Whether the file is there (in an object store, remembered once seen: the files
        are never rewritten, and a request per reused manifest would cost a round trip;
        ``remembered=False`` asks the store, for a file another process may have removed)."""
        if remembered:
            with self._lock:
                if name in self._known:
                    return True
        found = self._storage.exists(self._root.child(name))
        if found and self._remember:
            with self._lock:
                self._known.add(name)
        return found

    def write(self, name: str, data: bytes) -> str:
        """Write the file whole; its path as readers name it."""
        self._storage.write(self._root.child(name), data)
        if self._remember:
            with self._lock:
                self._known.add(name)
        return self.path(name)

    def listing(self) -> list[ObjectInfo]:
        """The files directly under the folder and in its metadata folder, named as
        :meth:`write` takes them, with their sizes and modification times."""
        inner = f"{self._folder}/{METADATA_FOLDER}" if self._folder else METADATA_FOLDER
        metadata = [
            ObjectInfo(f"{METADATA_FOLDER}/{o.name}", o.size, o.last_modified_ms)
            for o in self._storage.list_dir(inner)
        ]
        return self._storage.list_dir(self._folder) + metadata

    def read(self, name: str) -> bytes:
        return self._storage.read(self._root.child(name))

    def delete(self, names: list[str]) -> None:
        """Remove the files, and forget them (:meth:`exists` asks the store again)."""
        with self._lock:
            self._known.difference_update(names)
        self._storage.delete([self._root.child(name) for name in names])


def reader_path(location: Location) -> str:
    """How Iceberg readers name ``location``: an absolute path on local disk; an Azure
    object as ``abfss://container@account.dfs.core.windows.net/key`` (the account is part
    of the address for them); any other by its URI."""
    if location.kind == "local":
        return location.key
    if location.kind == "azure" and location.account:
        host = f"{location.account}.dfs.core.windows.net"
        return f"abfss://{location.bucket}@{host}/{location.key}".rstrip("/")
    return location.uri


def name_in(path: str) -> str:
    """The name of a file written by :class:`MetadataFiles` from its path (the last part:
    manifests and manifest lists lie directly under the root)."""
    return path.rsplit("/", 1)[-1]
