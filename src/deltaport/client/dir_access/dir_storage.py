"""Storage for directory mode: each directory of a table (its root and auxiliary
locations) read with its own vended, self-renewing credential."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from obstore.store import AzureStore, GCSStore, S3Store

from deltaport.client.remote.credentials import CredentialSource
from deltaport.storage import Location, Storage, StorageError, parse_location


class DirectoryStorage(Storage):
    """Reads objects under the directories of ``sources`` only.

    ``options`` are the recipient's obstore options (endpoint, region, ...); they override
    what the server told with the credentials. The credentials come from obstore's
    ``credential_provider`` calling each directory's ``CredentialSource``."""

    def __init__(
        self,
        root: Location,
        sources: Sequence[CredentialSource],
        options: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(root, options)
        self.sources = tuple(sources)
        self._directories = [parse_location(s.location) for s in self.sources]

    def source_for(self, location: Location) -> tuple[int, CredentialSource]:
        """The directory holding ``location`` (the deepest, when nested)."""
        best: tuple[int, int] | None = None
        for i, directory in enumerate(self._directories):
            prefix = directory.key.strip("/")
            key = location.key.strip("/")
            if (directory.kind, directory.bucket) != (location.kind, location.bucket):
                continue
            inside = key == prefix or key.startswith(prefix + "/") or not prefix
            if inside and (best is None or len(prefix) > best[1]):
                best = (i, len(prefix))
        if best is None:
            raise StorageError(
                f"{location.uri} is outside the directories this table's credentials cover"
            )
        return best[0], self.sources[best[0]]

    def object_store(self, location: Location) -> S3Store | AzureStore | GCSStore:
        if location.kind == "local":
            raise StorageError("a table read in dir mode has no local files")
        index, source = self.source_for(location)
        key = (str(index), location.bucket)
        with self._lock:
            store = self._stores.get(key)
            if store is None:
                store = _make_store(location, {**source.store_options(), **self.options}, source)
                self._stores[key] = store
            return store


def _make_store(
    location: Location, options: dict[str, Any], source: CredentialSource
) -> S3Store | AzureStore | GCSStore:
    provider = source.provider
    if location.kind == "s3":
        return S3Store(location.bucket, config=options, credential_provider=provider)  # type: ignore[arg-type]
    if location.kind == "azure":
        if location.account and not any(k.endswith("account_name") for k in options):
            options["azure_storage_account_name"] = location.account
        return AzureStore(location.bucket, config=options, credential_provider=provider)  # type: ignore[arg-type]
    return GCSStore(location.bucket, config=options, credential_provider=provider)  # type: ignore[arg-type]
