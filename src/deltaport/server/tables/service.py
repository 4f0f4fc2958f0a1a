"""The table service: a request on a shared table -> resolved snapshot -> response lines.

Everything here blocks (log reads, signing); the HTTP layer calls it from worker threads.
The snapshot and the selected files are resolved before the response starts, so errors
still get proper statuses; the file lines are then built and encoded slice by slice while
the body streams.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

import msgspec
import pyarrow as pa
import pyarrow.compute as pc

from deltaport.catalog.model import SharedTable
from deltaport.delta import Snapshot
from deltaport.delta.errors import DeltaError
from deltaport.protocol.actions import (
    EndStreamAction,
    MetadataLine,
    ProtocolLine,
    QueryTableRequest,
)
from deltaport.protocol.capabilities import DELTA, Capabilities, choose_response_format
from deltaport.protocol.errors import InvalidParameterError
from deltaport.protocol.timestamps import parse_timestamp as parse_protocol_timestamp
from deltaport.server.answers.end_stream import stream_body
from deltaport.server.answers.lines import metadata_line, protocol_line
from deltaport.server.answers.ndjson import Chunk, encode_lines
from deltaport.server.files.signing import UrlSigner, url_expiry
from deltaport.server.paging.snapshot_pages import SnapshotPages, SnapshotPin
from deltaport.server.paging.table_pages import TableTokens
from deltaport.server.paging.tokens import TokenSigner
from deltaport.server.tables.errors import file_outside_table, refusals_answered, table_failure
from deltaport.server.tables.selection import HintSettings, select_files
from deltaport.server.tables.snapshot_cache import ROW_COLUMN, PreparedSnapshot
from deltaport.server.tables.snapshot_lines import SnapshotLines
from deltaport.sharing import TableRead, TableResolver, VersionAsk
from deltaport.storage import StorageError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Selection:
    """A query's snapshot as the recipient reads it, prepared for answering, and the files
    it selected."""

    read: TableRead
    prepared: PreparedSnapshot
    files: pa.Table
    response_format: str

    @property
    def version(self) -> int:
        return self.prepared.snapshot.version


@dataclass
class TableResponse:
    """A table answer: its ``Delta-Table-Version``, the format used and the NDJSON body;
    ``files`` and ``size``: how many data files it lists and their bytes in all;
    ``file_id_hash``: the ``fileidhash`` scheme of its file ids, echoed in a header;
    ``end_version``: the end of a version range, as the request named it. The audit
    record is made from these (no parsing of the request or the stream)."""

    version: int
    response_format: str
    include_end_stream_action: bool
    body: Iterator[Chunk]
    files: int = 0
    size: int = 0
    file_id_hash: str | None = None
    end_version: int | None = None


def listed(files: pa.Table) -> tuple[int, int]:
    """How many files ``files`` holds and their ``size`` in all."""
    return files.num_rows, int(pc.sum(files.column("size")).as_py() or 0)


class TableService:
    def __init__(
        self,
        signer: UrlSigner,
        url_lifetime: timedelta,
        hints: HintSettings,
        resolver: TableResolver | None = None,
        pages: SnapshotPages | None = None,
    ) -> None:
        self._signer = signer
        self._url_lifetime = url_lifetime
        self._hints = hints
        self._resolver = resolver or TableResolver()
        # without a shared key, tokens are only valid on this process
        self._pages = pages or SnapshotPages(TableTokens(TokenSigner(os.urandom(32))))
        self._lines = SnapshotLines(signer)

    # -- version -------------------------------------------------------------------------
    def table_version(self, table: SharedTable, starting_timestamp: str | None) -> int:
        """Latest version, or the earliest version at or after ``starting_timestamp``."""
        with _delta_errors(table):
            if starting_timestamp is None:
                return self._resolver.latest_version(table)
            return self._resolver.version_from(table, starting_timestamp)

    # -- metadata and query ----------------------------------------------------------------
    def metadata(
        self,
        table: SharedTable,
        caps: Capabilities,
        version: int | None = None,
        timestamp: str | None = None,
    ) -> TableResponse:
        ask = VersionAsk(version, timestamp)
        with _delta_errors(table):
            read = self._resolver.read(table, ask)
        fmt = _response_format(caps, read.snapshot)
        lines = _head_lines(read, fmt, ask.travelled)
        return TableResponse(read.version, fmt, False, iter([encode_lines(lines)]))

    def query(
        self, table: SharedTable, caps: Capabilities, request: QueryTableRequest
    ) -> TableResponse:
        check_query(request)
        pin = self._pages.pin(table, request, caps)
        return self.answer(
            table, caps, request, pin, self.select(table, caps, request, pin.version)
        )

    def pin(
        self, table: SharedTable, caps: Capabilities, request: QueryTableRequest
    ) -> SnapshotPin:
        """What a page or refresh token of ``request`` pins (400 when it is not valid)."""
        return self._pages.pin(table, request, caps)

    def select(
        self,
        table: SharedTable,
        caps: Capabilities,
        request: QueryTableRequest,
        pinned: int | None,
    ) -> Selection:
        """The snapshot (at ``pinned``, else as ``request`` asks) and the files the query
        selects: the long part of a query on a table of many files."""
        with _delta_errors(table):
            if pinned is None:
                read = self._resolver.read(table, VersionAsk(request.version, request.timestamp))
            else:
                read = self._resolver.pinned(table, pinned)
        snapshot = read.snapshot
        fmt = _response_format(caps, snapshot)
        prepared = self._lines.prepared(table, snapshot, caps.file_id_hash)
        files = select_files(
            read.visible(prepared.files),
            snapshot.metadata,
            request.predicateHints,
            request.jsonPredicateHints,
            request.limitHint,
            self._hints,
        )
        return Selection(read, prepared, files, fmt)

    def answer(
        self,
        table: SharedTable,
        caps: Capabilities,
        request: QueryTableRequest,
        pin: SnapshotPin,
        selection: Selection,
    ) -> TableResponse:
        """The page of ``selection`` that ``request`` (``maxFiles``) and ``pin`` ask for."""
        prepared, fmt = selection.prepared, selection.response_format
        snapshot = prepared.snapshot
        travelled = request.version is not None or request.timestamp is not None
        page = self._pages.page(table, request, caps, pin, snapshot.version, selection.files)
        outside = prepared.unservable_among(page.files.column(ROW_COLUMN))
        if outside is not None:
            raise file_outside_table(table, snapshot.version, outside)
        selection_key = (pin.digest, pin.offset, request.maxFiles)
        body = self._query_body(
            selection.read, prepared, page.files, fmt, travelled, page.end, selection_key
        )
        return TableResponse(
            snapshot.version,
            fmt,
            page.end is not None,
            body,
            *listed(page.files),
            file_id_hash=caps.file_id_hash,
        )

    def resolve_version(self, table: SharedTable, request: QueryTableRequest) -> int | None:
        """The version ``request`` asks for, checked without reading the snapshot: what an
        asynchronous query pins when it is submitted. None for a timestamp (checked here,
        resolved with the snapshot: the version of a past timestamp does not change)."""
        with _delta_errors(table):
            return self._resolver.checked_version(
                table, VersionAsk(request.version, request.timestamp)
            )

    def _query_body(
        self,
        read: TableRead,
        prepared: PreparedSnapshot,
        files: pa.Table,
        fmt: str,
        travelled: bool,
        end: EndStreamAction | None,
        selection: Hashable,
    ) -> Iterator[Chunk]:
        table, snapshot = read.table, prepared.snapshot
        head = _head_lines(read, fmt, travelled)
        expires_at = url_expiry(self._url_lifetime)
        version = snapshot.version if travelled else None
        timestamp = snapshot.timestamp if travelled else None
        segments = self._lines.segments(
            table, prepared, files, fmt, version, timestamp, expires_at, selection
        )
        if end is not None and files.num_rows:
            end = msgspec.structs.replace(end, minUrlExpirationTimestamp=expires_at * 1000)
        return stream_body(encode_lines(head), segments, end, table.key)


def parse_timestamp(text: str) -> datetime:
    """A timestamp parameter (see :mod:`deltaport.protocol.timestamps`); 400 if malformed."""
    try:
        return parse_protocol_timestamp(text)
    except ValueError as exc:
        raise InvalidParameterError(str(exc)) from None


def check_query(request: QueryTableRequest) -> None:
    given = [
        name
        for name, value in (
            ("version", request.version),
            ("timestamp", request.timestamp),
            ("startingVersion", request.startingVersion),
        )
        if value is not None
    ]
    if len(given) > 1:
        raise InvalidParameterError(f"only one of {', '.join(given)} may be set")
    if request.startingVersion is not None and request.startingVersion < 0:
        raise InvalidParameterError("startingVersion cannot be negative")
    if request.endingVersion is not None and request.startingVersion is None:
        raise InvalidParameterError("endingVersion needs startingVersion")
    if request.limitHint is not None and request.limitHint < 0:
        raise InvalidParameterError("limitHint cannot be negative")
    if request.maxFiles is not None and request.maxFiles <= 0:
        raise InvalidParameterError("maxFiles must be positive")


def _response_format(caps: Capabilities, snapshot: Snapshot) -> str:
    protocol = snapshot.protocol
    features = protocol.reader_features or ()
    return choose_response_format(caps, features, snapshot.metadata.column_mapping_mode)


@contextmanager
def _delta_errors(table: SharedTable) -> Iterator[None]:
    """The resolver's refusals and the engine's failures as protocol errors, without
    storage locations in the message."""
    try:
        with refusals_answered():
            yield
    except (DeltaError, StorageError) as exc:
        raise table_failure(table, exc) from None


def _head_lines(read: TableRead, fmt: str, travelled: bool) -> list[ProtocolLine | MetadataLine]:
    """The protocol and metadata lines that open a snapshot's answer; the metadata names the
    version when the request travelled in time, and always in delta format. ``size`` and
    ``numFiles`` count the files the recipient sees (fewer under a partition filter)."""
    snapshot = read.snapshot
    return [
        protocol_line(snapshot.protocol, fmt),
        metadata_line(
            snapshot.metadata,
            fmt,
            version=snapshot.version if travelled or fmt == DELTA else None,
            size=read.size,
            num_files=read.num_files,
            access=read.table.access,
        ),
    ]
