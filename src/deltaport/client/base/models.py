"""Small values a recipient handles: shares, schemas, tables, and the files of a scan."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from deltaport.delta.model import DeletionVector, Metadata, Protocol

CHANGE_TYPES = {"add": "insert", "remove": "delete", "cdc": None}
"""The ``_change_type`` of each change-file action; ``None``: the file carries its own."""


@dataclass(frozen=True)
class TableAccess:
    """What a table's metadata (or list-tables item) says about reading it."""

    modes: tuple[str, ...] = ("url",)
    location: str | None = None
    auxiliary_locations: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, item: Mapping[str, Any]) -> TableAccess:
        modes = item.get("accessModes")
        aux = item.get("auxiliaryLocations") or ()
        return cls(
            tuple(str(m) for m in modes) if modes else ("url",),
            item.get("location") or None,
            tuple(str(a) for a in aux),
        )


@dataclass(frozen=True)
class Share:
    """``display_name``, ``comment`` and ``properties``: what the server's listing says of
    it besides its name (None when it says nothing); they are not part of its identity."""

    name: str
    id: str | None = None
    display_name: str | None = field(default=None, compare=False)
    comment: str | None = field(default=None, compare=False)
    properties: Mapping[str, str] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Schema:
    """As ``Share``: ``display_name``, ``comment``, ``properties`` from the listing."""

    name: str
    share: str
    display_name: str | None = field(default=None, compare=False)
    comment: str | None = field(default=None, compare=False)
    properties: Mapping[str, str] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Table:
    """As ``Share``: ``display_name``, ``comment``, ``properties`` from the listing."""

    name: str
    share: str
    schema: str
    access: TableAccess | None = field(default=None, compare=False)
    """How the table may be read, when a listing said so (None: not known yet)."""
    display_name: str | None = field(default=None, compare=False)
    comment: str | None = field(default=None, compare=False)
    properties: Mapping[str, str] | None = field(default=None, compare=False)

    @property
    def full_name(self) -> str:
        return f"{self.share}.{self.schema}.{self.name}"


def described(item: Mapping[str, Any]) -> dict[str, Any]:
    """The ``displayName``, ``comment`` and ``properties`` of a listing item, as keyword
    arguments of ``Share``, ``Schema`` and ``Table``."""
    return {
        "display_name": item.get("displayName"),
        "comment": item.get("comment"),
        "properties": item.get("properties"),
    }


@dataclass(frozen=True)
class TableInfo:
    """A table as OpenSharing's Get Table describes it: its identifiers and ``formats``
    (``delta``, ``iceberg``: which APIs read it)."""

    name: str
    schema: str
    share: str
    formats: tuple[str, ...]
    share_id: str | None = None
    id: str | None = None

    @classmethod
    def from_json(cls, item: Mapping[str, Any]) -> TableInfo:
        formats = str(item.get("format") or "")
        return cls(
            str(item["name"]),
            str(item["schema"]),
            str(item["share"]),
            tuple(f.strip() for f in formats.split(",") if f.strip()),
            item.get("shareId"),
            item.get("id"),
        )


@dataclass(frozen=True)
class RemoteFile:
    """One data file of a scan, as the server described it (picklable, for executors).

    ``action`` is ``file`` for snapshot files, or ``add``/``remove``/``cdc`` for the
    files of a version range (with the ``version`` and ``timestamp`` of their commit).
    ``deletion_vector`` is the delta-format descriptor (stored DVs point at a URL);
    ``partner_deletion_vector`` is set on a change file whose version also removes (or
    re-adds) the same file: only the rows between the two DVs are changes then.
    ``data_change`` is the Delta action's ``dataChange`` flag, which only the delta
    response format carries: false on files a commit merely rearranged (compaction) and
    on ``cdc`` files. ``modification_time`` (milliseconds since the epoch) is the delta
    format's ``modificationTime`` of an added file.
    """

    id: str
    url: str
    size: int
    partition_values: Mapping[str, str | None] = field(default_factory=dict)
    stats: str | None = None
    expiration_timestamp: int | None = None
    deletion_vector: DeletionVector | None = None
    partner_deletion_vector: DeletionVector | None = None
    has_partner: bool = False
    action: str = "file"
    version: int | None = None
    timestamp: int | None = None
    data_change: bool = True
    modification_time: int | None = None

    @property
    def key(self) -> tuple[str, str, int | None]:
        """Identifies the file across responses of the same query (ids repeat in CDF)."""
        return (self.id, self.action, None if self.action == "file" else self.version)

    @property
    def change_type(self) -> str | None:
        return CHANGE_TYPES.get(self.action)


@dataclass(frozen=True)
class QuerySpec:
    """What to ask the server again to refresh a plan's URLs."""

    table: Table
    kind: str
    """``snapshot``, ``versions`` (``/query`` with ``startingVersion``) or ``changes``."""
    body: Mapping[str, Any]
    """The query body (snapshot, versions) or the query parameters (changes)."""
    response_formats: tuple[str, ...]
    async_query: bool = False
    """Ask for an asynchronous query (``asyncquery=true``; snapshot queries only)."""
    file_id_hash: str | None = None
    """The ``fileidhash`` scheme of the file ids asked for (None: the server's own)."""


@dataclass(frozen=True)
class ScanPlan:
    """The files of one snapshot or version range, with what is needed to read them.

    ``metadata`` is the table's metadata at ``version`` for a snapshot, or at the end of
    a range; ``metadata_changes`` lists, for a range, the metadata in effect at its first
    version and then each later version in it that set the table's metadata (with that
    metadata), in version order.
    """

    table: Table
    version: int
    protocol: Protocol
    metadata: Metadata
    files: tuple[RemoteFile, ...]
    response_format: str
    cdf: bool
    query: QuerySpec
    refresh_token: str | None = None
    metadata_changes: tuple[tuple[int, Metadata], ...] = ()
    protocol_changes: tuple[tuple[int, Protocol], ...] = ()
    """For a range read in the delta format, each later version in it that changed the
    table's protocol (``includeHistoricalProtocol``), with that protocol, in version order;
    every one of them is readable by this client (else the plan is refused)."""
    file_batch_url: str | None = None
    """Where the server sends many of its files at once (its ``Deltaport-File-Batch``
    header, see ``deltaport.protocol.file_batch``); None: it does not."""

    @property
    def min_url_expiration(self) -> int | None:
        stamps = [f.expiration_timestamp for f in self.files if f.expiration_timestamp]
        return min(stamps) if stamps else None
