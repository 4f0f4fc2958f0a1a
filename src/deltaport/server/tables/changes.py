"""Version ranges: the change data feed (``/changes``) and ``/query`` with ``startingVersion``.

Both resolve a range ``start..end`` (versions, or timestamps turned into versions), read
the file actions of those commits and stream them with each commit's version and
timestamp. ``/changes`` answers the change data feed (cdc files where a commit wrote them,
else its data-changing adds and removes) and needs the feed on for the whole range;
``/query`` answers the adds and removes a streaming reader replays. Metadata changes inside
the range come as ``metaData`` lines with their version, before that version's files.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from deltaport.catalog.model import SharedTable
from deltaport.delta import DeltaTable, TableChanges
from deltaport.delta.errors import (
    CdfNotEnabledError,
    DeltaError,
    TimestampOutOfRangeError,
    UnsupportedFeatureError,
    VersionNotFoundError,
)
from deltaport.delta.model import Metadata
from deltaport.protocol.actions import EndStreamAction, QueryTableRequest
from deltaport.protocol.capabilities import DELTA, Capabilities, choose_response_format
from deltaport.protocol.errors import (
    InvalidParameterError,
    UnsupportedOperationError,
)
from deltaport.protocol.params import bool_param, int_param
from deltaport.server.answers.change_lines import change_file_lines
from deltaport.server.answers.end_stream import stream_body
from deltaport.server.answers.lines import metadata_line, protocol_line
from deltaport.server.answers.ndjson import encode_lines
from deltaport.server.files.signing import UrlSigner
from deltaport.server.paging.table_pages import TableTokens, page_bounds, query_digest
from deltaport.server.tables.errors import (
    file_outside_table,
    refusals_answered,
    table_failure,
    table_name,
)
from deltaport.server.tables.service import TableResponse, listed, parse_timestamp
from deltaport.sharing import TableResolver
from deltaport.storage import StorageError

log = logging.getLogger(__name__)

FILES_PER_SLICE = 1000


@dataclass(frozen=True)
class ChangesQuery:
    """The parameters of ``GET .../changes``."""

    starting_version: int | None = None
    starting_timestamp: str | None = None
    ending_version: int | None = None
    ending_timestamp: str | None = None
    include_historical_metadata: bool = False
    include_historical_protocol: bool = False
    max_files: int | None = None
    page_token: str | None = None


@dataclass(frozen=True)
class _Range:
    """A resolved request: what to read and how to page it."""

    start: int
    end: int
    offset: int
    digest: str


class ChangeService:
    def __init__(
        self,
        signer: UrlSigner,
        url_lifetime: timedelta,
        tokens: TableTokens,
        resolver: TableResolver | None = None,
    ) -> None:
        self._signer = signer
        self._url_lifetime = url_lifetime
        self._tokens = tokens
        self._resolver = resolver or TableResolver()

    def changes(self, table: SharedTable, caps: Capabilities, query: ChangesQuery) -> TableResponse:
        """The change data feed of the asked range."""
        _check_max_files(query.max_files)
        with _delta_errors(table):
            self._resolver.require_history(table)
            delta_table = self._table(table)
            digest = query_digest(
                "changes",
                table.scope,
                query.starting_version,
                query.starting_timestamp,
                query.ending_version,
                query.ending_timestamp,
                query.include_historical_metadata,
                query.include_historical_protocol,
                caps.response_formats,
            )
            span = self._resolve(
                table,
                delta_table,
                digest,
                query.page_token,
                lambda: _starting_version(
                    delta_table, query.starting_version, query.starting_timestamp
                ),
                lambda latest: _ending_version(
                    delta_table, latest, query.ending_version, query.ending_timestamp
                ),
            )
            changes = delta_table.change_data(span.start, span.end)
        fmt = _range_format(caps, changes)
        return self._respond(
            table,
            caps,
            changes,
            self._resolver.visible_changes(table, changes.files, changes.metadata),
            fmt,
            span,
            query.max_files,
            paged=query.max_files is not None or query.page_token is not None,
            historical=query.include_historical_metadata,
            protocols=query.include_historical_protocol,
            asked_end=query.ending_version,
        )

    def query_range(
        self, table: SharedTable, caps: Capabilities, request: QueryTableRequest
    ) -> TableResponse:
        """``/query`` with ``startingVersion``: the adds and removes of each version."""
        _check_max_files(request.maxFiles)
        if request.version is not None or request.timestamp is not None:
            raise InvalidParameterError(
                "startingVersion cannot be combined with version or timestamp"
            )
        if request.includeRefreshToken or request.refreshToken:
            raise InvalidParameterError(
                "refresh tokens are only supported on queries of the latest snapshot"
            )
        starting = request.startingVersion
        with _delta_errors(table):
            self._resolver.require_history(table)
        if starting is None:
            raise InvalidParameterError("startingVersion is required")
        if starting < 0:
            raise InvalidParameterError("startingVersion cannot be negative")
        with _delta_errors(table):
            delta_table = self._table(table)
            digest = query_digest(
                "range",
                table.scope,
                starting,
                request.endingVersion,
                bool(request.includeHistoricalProtocol),
                caps.response_formats,
            )
            span = self._resolve(
                table,
                delta_table,
                digest,
                request.pageToken,
                lambda: starting,
                lambda latest: _ending_version(delta_table, latest, request.endingVersion, None),
            )
            changes = delta_table.changes(span.start, span.end)
        fmt = _range_format(caps, changes)
        files = self._resolver.visible_changes(table, changes.files, changes.metadata)
        keep = pc.not_equal(files.column("action"), "cdc")
        if fmt != DELTA:  # the parquet format cannot say dataChange=false
            keep = pc.and_(keep, pc.fill_null(files.column("data_change"), True))
        return self._respond(
            table,
            caps,
            changes,
            files.filter(keep),
            fmt,
            span,
            request.maxFiles,
            paged=request.maxFiles is not None or request.pageToken is not None,
            historical=True,
            protocols=bool(request.includeHistoricalProtocol),
            asked_end=request.endingVersion,
        )

    # -- resolution ------------------------------------------------------------------------
    def _table(self, table: SharedTable) -> DeltaTable:
        return self._resolver.delta_table(table)

    def _resolve(
        self,
        table: SharedTable,
        delta_table: DeltaTable,
        digest: str,
        page_token: str | None,
        starting: Callable[[], int],
        ending: Callable[[int], int],
    ) -> _Range:
        if page_token:
            cursor = self._tokens.open_page(page_token, table.key, digest)
            return _Range(cursor.start, cursor.version, cursor.offset, digest)
        latest = delta_table.latest_version()
        start = starting()
        end = ending(latest)
        self._resolver.check_range(table, start, end, latest)
        return _Range(start, end, 0, digest)

    # -- the answer ------------------------------------------------------------------------
    def _respond(
        self,
        table: SharedTable,
        caps: Capabilities,
        changes: TableChanges,
        files: pa.Table,
        fmt: str,
        span: _Range,
        max_files: int | None,
        *,
        paged: bool,
        historical: bool,
        protocols: bool,
        asked_end: int | None,
    ) -> TableResponse:
        """``historical``: with the metadata each version of the page set; ``protocols``:
        with the protocol each set and the head protocol's version (delta format only, as
        ``includeHistoricalProtocol`` asks)."""
        protocols = protocols and fmt == DELTA
        first, last = page_bounds(files.num_rows, span.offset, max_files)
        page = files.slice(first, last - first)
        outside = self._signer.unservable(table, page.column("path").combine_chunks())
        if outside:
            row, why = min(outside.items())
            raise file_outside_table(table, page.column("version")[row].as_py(), why)
        next_token = None
        if last < files.num_rows:
            next_token = self._tokens.page_token(table.key, span.digest, span.start, span.end, last)
        versions = files.column("version")
        after = versions[first - 1].as_py() if first > 0 else span.start
        through = versions[last - 1].as_py() if next_token is not None else span.end
        changed: list[tuple[int, Any]] = []
        for e in changes.versions:
            if after < e.version <= through:
                if protocols and e.protocol is not None:
                    changed.append((e.version, protocol_line(e.protocol, fmt, e.version)))
                if historical and e.metadata is not None:
                    changed.append((e.version, _historical(e.version, e.metadata, fmt, table)))
        head = [
            protocol_line(changes.protocol, fmt, span.start if protocols else None),
            metadata_line(
                changes.metadata,
                fmt,
                version=span.start,
                size=None,
                num_files=None,
                access=table.access,
            ),
        ]
        expiration_ms = int((time.time() + self._url_lifetime.total_seconds()) * 1000)
        end = None
        if caps.include_end_stream_action or paged:
            end = EndStreamAction(
                nextPageToken=next_token,
                minUrlExpirationTimestamp=expiration_ms if page.num_rows else None,
            )

        def sign(paths: Sequence[str]) -> list[str]:
            return self._signer.sign_files(table, paths, self._url_lifetime)

        def segments() -> Iterator[bytes]:
            pending = list(changed)
            for offset in range(0, page.num_rows, FILES_PER_SLICE):
                part = page.slice(offset, FILES_PER_SLICE)
                lines = change_file_lines(part, fmt, sign, expiration_ms, caps.file_id_hash)
                out: list[Any] = []
                for version, line in zip(part.column("version").to_pylist(), lines, strict=True):
                    while pending and pending[0][0] <= version:
                        out.append(pending.pop(0)[1])
                    out.append(line)
                yield encode_lines(out)
            yield encode_lines([line for _, line in pending])

        body = stream_body(encode_lines(head), segments(), end, table_name(table))
        return TableResponse(
            span.start,
            fmt,
            end is not None,
            body,
            *listed(page),
            file_id_hash=caps.file_id_hash,
            end_version=asked_end,
        )


def _historical(version: int, metadata: Metadata, fmt: str, table: SharedTable) -> Any:
    access = table.access
    return metadata_line(metadata, fmt, version=version, size=None, num_files=None, access=access)


def _starting_version(delta_table: DeltaTable, version: int | None, timestamp: str | None) -> int:
    if version is not None and timestamp is not None:
        raise InvalidParameterError("give startingVersion or startingTimestamp, not both")
    if version is not None:
        if version < 0:
            raise InvalidParameterError("startingVersion cannot be negative")
        return version
    if timestamp is None:
        raise InvalidParameterError("startingVersion or startingTimestamp is required")
    return delta_table.version_at(parse_timestamp(timestamp), at_or_after=True)


def _ending_version(
    delta_table: DeltaTable, latest: int, version: int | None, timestamp: str | None
) -> int:
    if version is not None and timestamp is not None:
        raise InvalidParameterError("give endingVersion or endingTimestamp, not both")
    if version is not None:
        if version > latest:
            raise InvalidParameterError(
                f"the ending version {version} is after the latest version {latest}"
            )
        return version
    if timestamp is not None:
        return delta_table.version_at(parse_timestamp(timestamp))
    return latest


def _check_max_files(max_files: int | None) -> None:
    if max_files is not None and max_files <= 0:
        raise InvalidParameterError("maxFiles must be positive")


def _range_format(caps: Capabilities, changes: TableChanges) -> str:
    """The response format able to describe every version of the range."""
    features: set[str] = set(changes.protocol.reader_features or ())
    mapping = changes.metadata.column_mapping_mode
    for entry in changes.versions:
        if entry.protocol is not None:
            features.update(entry.protocol.reader_features or ())
        if entry.metadata is not None and entry.metadata.column_mapping_mode != "none":
            mapping = entry.metadata.column_mapping_mode
    return choose_response_format(caps, sorted(features), mapping)


@contextmanager
def _delta_errors(table: SharedTable) -> Iterator[None]:
    """The resolver's refusals as the sharing API's errors; engine errors as 400s with the
    engine's message (versions and times, no locations)."""
    try:
        with refusals_answered():
            yield
    except (VersionNotFoundError, TimestampOutOfRangeError, CdfNotEnabledError) as exc:
        raise InvalidParameterError(f"table {table_name(table)}: {exc}") from None
    except UnsupportedFeatureError as exc:
        raise UnsupportedOperationError(
            f"table {table_name(table)} cannot be shared: {exc}"
        ) from None
    except (DeltaError, StorageError) as exc:
        raise table_failure(table, exc) from None


def changes_query(params: Mapping[str, str]) -> ChangesQuery:
    """The ``/changes`` parameters from a URL query (400 on values of the wrong type)."""
    return ChangesQuery(
        starting_version=int_param(params.get("startingVersion"), "startingVersion"),
        starting_timestamp=params.get("startingTimestamp") or None,
        ending_version=int_param(params.get("endingVersion"), "endingVersion"),
        ending_timestamp=params.get("endingTimestamp") or None,
        include_historical_metadata=bool_param(
            params.get("includeHistoricalMetadata"), "includeHistoricalMetadata"
        ),
        include_historical_protocol=bool_param(
            params.get("includeHistoricalProtocol"), "includeHistoricalProtocol"
        ),
        max_files=int_param(params.get("maxFiles"), "maxFiles"),
        page_token=params.get("pageToken") or None,
    )
