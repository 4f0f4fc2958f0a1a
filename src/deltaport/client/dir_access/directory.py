"""A shared table read in directory mode: its Delta log and files read by deltaport's own
engine with vended credentials, selecting the same files and rows ``/query`` and
``/changes`` would (predicate skipping and the limit hint as the server applies them)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

import pyarrow as pa

from deltaport.client.base.models import Table, TableAccess
from deltaport.client.dir_access.dir_storage import DirectoryStorage
from deltaport.client.remote.credentials import (
    DEFAULT_RENEW_MARGIN,
    Clock,
    CredentialSource,
    VendedCredentials,
    request_credentials,
    utc_now,
)
from deltaport.client.remote.rest import RestClient
from deltaport.delta import DeltaTable
from deltaport.delta.model import Metadata
from deltaport.protocol.predicates import Expr
from deltaport.protocol.timestamps import parse_timestamp
from deltaport.read.file_selection import apply_limit_hint, matching_files
from deltaport.read.scan import end_metadata
from deltaport.storage import parse_location


@dataclass(frozen=True)
class DirectoryRead:
    """The files of one read (FILE_SCHEMA, or CHANGE_SCHEMA with ``cdf``) and the metadata
    their rows are read with."""

    files: pa.Table
    metadata: Metadata
    cdf: bool
    version: int


@dataclass(frozen=True)
class RenewalSettings:
    margin: timedelta = DEFAULT_RENEW_MARGIN
    clock: Clock = utc_now


class DirectoryTable:
    """The table's directories, each with a self-renewing credential, and its log."""

    def __init__(
        self,
        sources: Sequence[CredentialSource],
        storage_options: dict[str, str] | None = None,
    ) -> None:
        root = parse_location(sources[0].location)
        self.storage = DirectoryStorage(root, sources, storage_options)
        self.delta = DeltaTable(root, storage=self.storage)

    @property
    def sources(self) -> tuple[CredentialSource, ...]:
        return self.storage.sources

    @classmethod
    def open(
        cls,
        rest: RestClient,
        table: Table,
        access: TableAccess,
        storage_options: dict[str, str] | None = None,
        renewal: RenewalSettings | None = None,
    ) -> DirectoryTable:
        """Credentials for the root and every auxiliary location, then a listing of the
        log to prove the directory can be read (raises what either step raised)."""
        renewal = renewal or RenewalSettings()
        asked: list[str | None] = [None, *access.auxiliary_locations]
        sources = [
            CredentialSource(
                request_credentials(rest, table, location),
                CredentialRenewer(rest, table, location),
                margin=renewal.margin,
                clock=renewal.clock,
            )
            for location in asked
        ]
        opened = cls(sources, storage_options)
        opened.delta.listing()
        return opened

    def credentials(self) -> list[VendedCredentials]:
        """The current credential of each directory (renewed if about to lapse)."""
        return [s.current() for s in self.sources]

    def snapshot_read(
        self,
        version: int | None = None,
        timestamp: str | None = None,
        predicate: Expr | None = None,
        limit: int | None = None,
    ) -> DirectoryRead:
        at = parse_timestamp(timestamp) if timestamp is not None else None
        snapshot = self.delta.snapshot(version, timestamp=at)
        files = snapshot.files
        if predicate is not None:
            try:
                files = matching_files(files, snapshot.metadata, predicate)
            except Exception:  # skipping is best effort, as on the server: keep all files
                files = snapshot.files
        if limit is not None:
            files = apply_limit_hint(files, limit)
        return DirectoryRead(files, snapshot.metadata, False, snapshot.version)

    def changes_read(
        self,
        starting_version: int | None = None,
        ending_version: int | None = None,
        starting_timestamp: str | None = None,
        ending_timestamp: str | None = None,
    ) -> DirectoryRead:
        """The change data feed of a range given as ``/changes`` takes it: a starting
        timestamp means the first version at or after it, an ending one the last version
        at or before it."""
        start = starting_version
        if start is None:
            if starting_timestamp is None:
                raise ValueError("either starting_version or starting_timestamp must be given")
            start = self.delta.version_at(parse_timestamp(starting_timestamp), at_or_after=True)
        end = ending_version
        if end is None and ending_timestamp is not None:
            end = self.delta.version_at(parse_timestamp(ending_timestamp))
        changes = self.delta.change_data(start, end)
        return DirectoryRead(changes.files, end_metadata(changes), True, changes.end_version)


@dataclass(frozen=True)
class CredentialRenewer:
    """Asks the server again for one directory's credential."""

    rest: RestClient
    table: Table
    location: str | None

    def __call__(self) -> VendedCredentials:
        return request_credentials(self.rest, self.table, self.location)
