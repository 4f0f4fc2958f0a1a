"""Byte access to table locations: local disk directly, cloud object stores via obstore."""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import quote

import obstore
import pyarrow as pa
from obstore.store import AzureStore, GCSStore, S3Store

from deltaport.storage.azure_sas import AzureBlobSigner
from deltaport.storage.retry import RetryOptionError, split_retry_options
from deltaport.storage.uri import Location, parse_location


class StorageError(OSError):
    """Storage could not be reached or answered with an error."""


class StorageFullError(StorageError):
    """A local write found its disk (or quota, or file size limit) full; nothing of it is
    left behind."""


FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
"""What a write on a full disk, over a quota or past a file size limit fails with."""


class ObjectNotFoundError(StorageError, FileNotFoundError):
    """The object does not exist."""


class ObjectExistsError(StorageError, FileExistsError):
    """A write that must create its object found one there already."""


@dataclass(frozen=True)
class ObjectInfo:
    """One listed object. ``name`` is relative to the listed directory."""

    name: str
    size: int
    last_modified_ms: int


class Storage:
    """Reads objects of one storage root (a table location) and anything the log points to.

    ``options`` are obstore configuration keys (for example ``aws_endpoint``,
    ``aws_access_key_id``, ``azure_storage_account_key``, ``google_service_account``); they
    apply to the root's bucket and to absolute paths in other buckets of the same kind.
    """

    def __init__(self, root: Location | str, options: Mapping[str, str] | None = None) -> None:
        self.root = parse_location(root) if isinstance(root, str) else root
        self.options: dict[str, str] = dict(options or {})
        self._stores: dict[tuple[str, str], Any] = {}
        self._lock = threading.Lock()

    # -- object stores ---------------------------------------------------------------
    def object_store(self, location: Location) -> S3Store | AzureStore | GCSStore:
        """The obstore store for ``location``'s bucket (cached per bucket)."""
        if location.kind == "local":
            raise StorageError("local locations are read directly, not through obstore")
        key = (location.kind, location.bucket)
        with self._lock:
            store = self._stores.get(key)
            if store is None:
                store = self._make_store(location)
                self._stores[key] = store
            return store

    def _make_store(self, location: Location) -> S3Store | AzureStore | GCSStore:
        try:
            opts, retry = split_retry_options(self.options)
        except RetryOptionError as exc:
            raise StorageError(str(exc)) from None
        if location.kind == "s3":
            return S3Store(location.bucket, config=opts, retry_config=retry)  # type: ignore[arg-type]
        if location.kind == "azure":
            if location.account and not any(k.endswith("account_name") for k in opts):
                opts["azure_storage_account_name"] = location.account
            return AzureStore(location.bucket, config=opts, retry_config=retry)  # type: ignore[arg-type]
        return GCSStore(location.bucket, config=opts, retry_config=retry)  # type: ignore[arg-type]

    # -- reads ------------------------------------------------------------------------
    def resolve(self, relative: str) -> Location:
        """The location of a path (already URL-decoded) relative to the root."""
        return self.root.child(relative)

    def list_dir(self, relative: str) -> list[ObjectInfo]:
        """Objects directly below ``relative`` (a directory under the root), sorted by name."""
        loc = self.resolve(relative)
        if loc.kind == "local":
            try:
                entries = list(os.scandir(loc.key))
            except (FileNotFoundError, NotADirectoryError):
                return []
            except OSError as exc:
                raise StorageError(f"cannot list {loc.uri}: {exc.strerror}") from exc
            out = []
            for entry in entries:
                try:
                    if not entry.is_file():
                        continue
                    st = entry.stat()
                except FileNotFoundError:
                    continue  # removed between the listing and the stat (a writer's temp file)
                out.append(ObjectInfo(entry.name, st.st_size, int(st.st_mtime * 1000)))
            out.sort(key=lambda o: o.name)
            return out
        prefix = loc.key.rstrip("/") + "/"
        try:
            result = obstore.list_with_delimiter(self.object_store(loc), prefix)
        except FileNotFoundError:
            return []
        except Exception as exc:
            raise _storage_error(exc, loc) from exc
        out = [
            ObjectInfo(
                meta["path"][len(prefix) :],
                int(meta["size"]),
                int(meta["last_modified"].timestamp() * 1000),
            )
            for meta in result["objects"]
        ]
        out.sort(key=lambda o: o.name)
        return out

    def read(self, location: Location) -> bytes:
        """The whole object."""
        if location.kind == "local":
            try:
                with open(location.key, "rb") as fh:
                    return fh.read()
            except FileNotFoundError as exc:
                raise ObjectNotFoundError(f"not found: {location.uri}") from exc
            except OSError as exc:
                raise StorageError(f"cannot read {location.uri}: {exc.strerror}") from exc
        try:
            return bytes(obstore.get(self.object_store(location), location.key).bytes())
        except Exception as exc:
            raise _storage_error(exc, location) from exc

    def read_range(self, location: Location, start: int, length: int) -> bytes:
        """``length`` bytes from offset ``start``."""
        if location.kind == "local":
            try:
                with open(location.key, "rb") as fh:
                    fh.seek(start)
                    return fh.read(length)
            except FileNotFoundError as exc:
                raise ObjectNotFoundError(f"not found: {location.uri}") from exc
            except OSError as exc:
                raise StorageError(f"cannot read {location.uri}: {exc.strerror}") from exc
        try:
            data = obstore.get_range(
                self.object_store(location), location.key, start=start, length=length
            )
            return bytes(data)
        except Exception as exc:
            raise _storage_error(exc, location) from exc

    def head(self, location: Location) -> ObjectInfo:
        """Size and modification time of one object."""
        if location.kind == "local":
            try:
                st = os.stat(location.key)
            except (FileNotFoundError, NotADirectoryError) as exc:
                # below a file (``/etc/passwd/_delta_log``) nothing exists either
                raise ObjectNotFoundError(f"not found: {location.uri}") from exc
            except OSError as exc:
                raise StorageError(f"cannot read {location.uri}: {exc.strerror}") from exc
            return ObjectInfo(os.path.basename(location.key), st.st_size, int(st.st_mtime * 1000))
        try:
            meta = obstore.head(self.object_store(location), location.key)
        except Exception as exc:
            raise _storage_error(exc, location) from exc
        return ObjectInfo(
            location.key.rsplit("/", 1)[-1],
            int(meta["size"]),
            int(meta["last_modified"].timestamp() * 1000),
        )

    # -- writes ---------------------------------------------------------------------
    def write(self, location: Location, data: bytes) -> None:
        """Write the whole object at once: a reader sees it whole or not at all (a local
        file is written beside and renamed; an object store's put is atomic)."""
        if location.kind == "local":
            _write_local(location, data, os.replace)
            return
        try:
            obstore.put(self.object_store(location), location.key, data)
        except Exception as exc:
            raise _storage_error(exc, location) from exc

    def write_new(self, location: Location, data: bytes) -> None:
        """Write the whole object only if none is there (put-if-absent), else raise
        `ObjectExistsError`: two writers of one Delta commit cannot both win."""
        if location.kind == "local":
            _write_local(location, data, os.link)  # a link fails if the name exists
            return
        try:
            obstore.put(self.object_store(location), location.key, data, mode="create")
        except Exception as exc:
            if type(exc).__name__ == "AlreadyExistsError":
                raise ObjectExistsError(f"already exists: {location.uri}") from None
            raise _storage_error(exc, location) from exc

    def delete(self, locations: Sequence[Location]) -> None:
        """Remove objects (one request per thousand in an object store); one already gone
        is no error."""
        for loc in locations:
            if loc.kind == "local":
                try:
                    os.unlink(loc.key)
                except FileNotFoundError:
                    continue
                except OSError as exc:
                    raise StorageError(f"cannot delete {loc.uri}: {exc.strerror}") from exc
        remote = [loc for loc in locations if loc.kind != "local"]
        groups: dict[tuple[str, str, str | None], list[Location]] = {}
        for loc in remote:
            groups.setdefault((loc.kind, loc.bucket, loc.account), []).append(loc)
        for group in groups.values():
            try:
                obstore.delete(self.object_store(group[0]), [loc.key for loc in group])
            except FileNotFoundError:
                continue
            except Exception as exc:
                raise _storage_error(exc, group[0]) from exc

    def exists(self, location: Location) -> bool:
        try:
            self.head(location)
        except ObjectNotFoundError:
            return False
        return True

    def holds_anything(self) -> bool:
        """Whether anything lies at the root (a file, a folder, or an object below it)."""
        if self.root.kind == "local":
            return os.path.exists(self.root.key)
        prefix = self.root.key.rstrip("/") + "/"
        try:
            first = next(iter(obstore.list(self.object_store(self.root), prefix, chunk_size=1)), [])
        except Exception as exc:
            raise _storage_error(exc, self.root) from exc
        return bool(first)

    def open_input(self, location: Location) -> str | pa.NativeFile:
        """Something ``pyarrow.parquet`` can open: a local path, or an in-memory buffer."""
        if location.kind == "local":
            if not os.path.exists(location.key):
                raise ObjectNotFoundError(f"not found: {location.uri}")
            return location.key
        return pa.BufferReader(self.read(location))

    # -- signing ----------------------------------------------------------------------
    def sign(self, locations: Sequence[Location], expires_in: timedelta) -> list[str]:
        """Pre-signed GET URLs for cloud objects, signed in one batch per bucket.

        S3 and GCS URLs come from obstore. Azure URLs are signed here when an account key
        or a SAS token is configured (see :mod:`deltaport.storage.azure_sas`), otherwise
        by obstore (user delegation).
        """
        out: list[str] = [""] * len(locations)
        groups: dict[tuple[str, str, str | None], list[int]] = {}
        for i, loc in enumerate(locations):
            if loc.kind == "local":
                raise StorageError("local files are not pre-signed by the object store")
            groups.setdefault((loc.kind, loc.bucket, loc.account), []).append(i)
        for indices in groups.values():
            first = locations[indices[0]]
            keys = [locations[i].key for i in indices]
            try:
                urls = self._sign_bucket(first, keys, expires_in)
            except Exception as exc:
                raise _storage_error(exc, first) from exc
            for i, url in zip(indices, urls, strict=True):
                out[i] = url
        return out

    def _sign_bucket(
        self, first: Location, keys: list[str], expires_in: timedelta
    ) -> Sequence[str]:
        if first.kind == "azure":
            signer = AzureBlobSigner.from_options(self.options, first.account)
            if signer is not None:
                return signer.sign(first.bucket, keys, expires_in)
        if first.kind == "gcs":
            # obstore puts GCS keys into the URL (and the signed canonical request) without
            # escaping '%', '#' or '?', so such names (frequent in Delta partition
            # directories) would address another object; hand it the RFC 3986 encoding.
            keys = [quote(key, safe="/~") for key in keys]
        return obstore.sign(self.object_store(first), "GET", keys, expires_in)


def _storage_error(exc: Exception, location: Location) -> StorageError:
    if isinstance(exc, FileNotFoundError) or type(exc).__name__ == "NotFoundError":
        return ObjectNotFoundError(f"not found: {location.uri}")
    # obstore messages can echo request details; keep only the error kind and location.
    return StorageError(f"storage error ({type(exc).__name__}) on {location.uri}")


def _write_local(location: Location, data: bytes, publish: Callable[[str, str], None]) -> None:
    """``data`` written beside ``location`` and then put in its place by ``publish``
    (``os.replace``, or ``os.link``, which refuses an existing name), atomically; the
    partial file never stays."""
    partial = f"{location.key}.{os.getpid()}.{threading.get_ident()}.partial"
    try:
        os.makedirs(os.path.dirname(location.key), exist_ok=True)
        with open(partial, "wb") as fh:
            fh.write(data)
        publish(partial, location.key)
    except FileExistsError:
        raise ObjectExistsError(f"already exists: {location.uri}") from None
    except OSError as exc:
        error = StorageFullError if exc.errno in FULL_ERRNOS else StorageError
        raise error(f"cannot write {location.uri}: {exc.strerror}") from exc
    finally:
        with suppress(OSError):
            os.remove(partial)
