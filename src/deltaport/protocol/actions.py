"""Wire models of the sharing protocol: request bodies and the NDJSON response lines.

Each response line is a wrapper object with one key (``protocol``, ``metaData``, ``file``,
``endStreamAction``). The parquet response format describes files itself (``url``,
``partitionValues``...); the delta format wraps Delta log actions as they are, with paths
replaced by signed URLs. Field names are the protocol's (camelCase) on purpose.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from deltaport.protocol.credentials import ACCESS_MODES

NonNegative = Annotated[int, msgspec.Meta(extra_json_schema={"minimum": 0})]
"""An integer the server refuses below 0 (with its own message, so the schema only says it)."""
Positive = Annotated[int, msgspec.Meta(extra_json_schema={"minimum": 1})]


class QueryTableRequest(msgspec.Struct, omit_defaults=True):
    """Body of ``POST .../query``. Unknown fields are ignored, as the reference server does."""

    predicateHints: list[str] | None = None
    jsonPredicateHints: str | None = None
    limitHint: NonNegative | None = None
    version: NonNegative | None = None
    timestamp: str | None = None
    startingVersion: NonNegative | None = None
    endingVersion: NonNegative | None = None
    maxFiles: Positive | None = None
    pageToken: str | None = None
    includeRefreshToken: bool | None = None
    refreshToken: str | None = None
    idempotencyKey: str | None = None
    includeHistoricalProtocol: bool | None = None
    idempotency_key: str | None = None
    """The reference Spark client's spelling of ``idempotencyKey``."""


class QueryInfoRequest(msgspec.Struct, omit_defaults=True):
    """Body of ``POST .../queries/{queryId}`` (Get Query Info); the reference client also
    repeats the ``queryId``, which the path already says."""

    maxFiles: Positive | None = None
    pageToken: str | None = None
    queryId: str | None = None


class QueryStatus(msgspec.Struct, omit_defaults=True):
    """An asynchronous query not answered yet: ``pending``, or ``failed`` with why."""

    queryId: str
    status: str
    errorCode: str | None = None
    errorMessage: str | None = None


class QueryStatusLine(msgspec.Struct):
    queryStatus: QueryStatus


# -- listing responses ---------------------------------------------------------------------
class ShareItem(msgspec.Struct, omit_defaults=True):
    name: str
    id: str | None = None
    displayName: str | None = None
    comment: str | None = None
    properties: dict[str, str] | None = None


class SchemaItem(msgspec.Struct, omit_defaults=True):
    name: str
    share: str
    displayName: str | None = None
    comment: str | None = None
    properties: dict[str, str] | None = None


class TableItem(msgspec.Struct, omit_defaults=True):
    name: str
    schema: str
    share: str
    shareId: str | None = None
    id: str | None = None
    displayName: str | None = None
    comment: str | None = None
    properties: dict[str, str] | None = None
    location: (
        Annotated[str, msgspec.Meta(description="The table's root directory (cloud tables).")]
        | None
    ) = None
    auxiliaryLocations: (
        Annotated[list[str], msgspec.Meta(description="Other directories holding its files.")]
        | None
    ) = None
    accessModes: (
        Annotated[
            list[Annotated[str, msgspec.Meta(extra_json_schema={"enum": list(ACCESS_MODES)})]],
            msgspec.Meta(
                description="url: /query signs each file; dir: temporary-table-credentials."
            ),
        ]
        | None
    ) = None


class GetTableResponse(msgspec.Struct, omit_defaults=True):
    """OpenSharing's Get Table: a table's identifiers and the format it is read in."""

    name: str
    schema: str
    share: str
    format: Annotated[str, msgspec.Meta(extra_json_schema={"enum": ["delta"]})]
    shareId: str | None = None
    id: str | None = None


class ListSharesResponse(msgspec.Struct, omit_defaults=True):
    items: list[ShareItem]
    nextPageToken: str | None = None


class GetShareResponse(msgspec.Struct):
    share: ShareItem


class ListSchemasResponse(msgspec.Struct, omit_defaults=True):
    items: list[SchemaItem]
    nextPageToken: str | None = None


class ListTablesResponse(msgspec.Struct, omit_defaults=True):
    items: list[TableItem]
    nextPageToken: str | None = None


# -- parquet response format ---------------------------------------------------------------
class Format(msgspec.Struct):
    provider: str = "parquet"


class ParquetProtocol(msgspec.Struct):
    minReaderVersion: int = 1


class ParquetMetadata(msgspec.Struct, omit_defaults=True):
    id: str
    format: Format
    schemaString: str
    partitionColumns: list[str]
    name: str | None = None
    description: str | None = None
    configuration: dict[str, str] | None = None
    version: int | None = None
    size: int | None = None
    numFiles: int | None = None
    location: str | None = None
    auxiliaryLocations: list[str] | None = None
    accessModes: list[str] | None = None


class ParquetFile(msgspec.Struct, omit_defaults=True):
    url: str
    id: str
    partitionValues: dict[str, str]
    size: int
    stats: str | None = None
    version: int | None = None
    timestamp: int | None = None
    expirationTimestamp: int | None = None


# -- delta response format -----------------------------------------------------------------
class DeltaProtocol(msgspec.Struct, omit_defaults=True):
    """``version``: the log version of the protocol, only when the client asked for
    historical protocols (``includeHistoricalProtocol``)."""

    deltaProtocol: dict[str, Any]
    version: int | None = None


class DeltaMetadata(msgspec.Struct, omit_defaults=True):
    deltaMetadata: dict[str, Any]
    version: int | None = None
    size: int | None = None
    numFiles: int | None = None
    location: str | None = None
    auxiliaryLocations: list[str] | None = None
    accessModes: list[str] | None = None


class DeltaFile(msgspec.Struct, omit_defaults=True):
    id: str
    deltaSingleAction: dict[str, Any]
    version: int | None = None
    timestamp: int | None = None
    expirationTimestamp: int | None = None


# -- line wrappers ---------------------------------------------------------------------------
class ProtocolLine(msgspec.Struct):
    protocol: ParquetProtocol | DeltaProtocol


class MetadataLine(msgspec.Struct):
    metaData: ParquetMetadata | DeltaMetadata


class FileLine(msgspec.Struct):
    file: ParquetFile | DeltaFile


class EndStreamAction(msgspec.Struct, omit_defaults=True):
    refreshToken: str | None = None
    nextPageToken: str | None = None
    minUrlExpirationTimestamp: int | None = None
    errorMessage: str | None = None


class EndStreamLine(msgspec.Struct):
    endStreamAction: EndStreamAction
