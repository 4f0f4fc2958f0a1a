"""The sharing API's route table, served at ``<endpoint>/openapi.json``: every route under
the endpoint, and nothing else (the listener's root routes and the Iceberg catalog have
documents of their own, each with its base path as its server).

The listener builds its routes from these operations
(:func:`~deltaport.web.operation_routes.operation_route`) and serves the document
:func:`~deltaport.protocol.openapi.openapi_document` generates from them, the bodies'
schemas from the protocol's structs the handlers decode and encode. A test keeps the
document equal to the routes the app serves."""

from __future__ import annotations

from typing import Any

from deltaport.protocol.actions import (
    GetShareResponse,
    GetTableResponse,
    ListSchemasResponse,
    ListSharesResponse,
    ListTablesResponse,
    QueryInfoRequest,
    QueryTableRequest,
    SchemaItem,
    ShareItem,
    TableItem,
)
from deltaport.protocol.capabilities import HEADER as CAPABILITIES_HEADER
from deltaport.protocol.credentials import (
    TemporaryCredentials,
    TemporaryCredentialsRequest,
    TemporaryCredentialsResponse,
)
from deltaport.protocol.file_batch import FILE_MAX_BYTES, MEDIA_TYPE, FileBatchRequest
from deltaport.protocol.file_id_hash import HEADER as FILE_ID_HASH_HEADER
from deltaport.protocol.openapi import (
    Answer,
    Api,
    Content,
    Header,
    Operation,
    Parameter,
    RequestBody,
)
from deltaport.protocol.openapi import openapi_document as generated
from deltaport.server.answers.ndjson import CONTENT_TYPE
from deltaport.server.openapi.catalog_routes import OAUTH_TOKEN
from deltaport.server.openapi.parameters import (
    CAPABILITIES,
    ERROR,
    ERRORS,
    FILE_ID_HASH,
    JSON,
    PAGING,
    QUERY_ID,
    SCHEMA,
    SCHEMA_NAMES,
    SHARE,
    TABLE_NAMES,
    VERSION_HEADER,
    Int64,
    path_limited,
    path_name,
    query,
)

SHARING_API = Api(
    title="deltaport Delta Sharing server",
    security=[{"bearer": []}],
    security_schemes={
        "bearer": {"type": "http", "scheme": "bearer"},
        "client": {"type": "http", "scheme": "basic"},
    },
    schema_names={
        **SCHEMA_NAMES,
        ShareItem: "Share",
        SchemaItem: "Schema",
        TableItem: "Table",
        ListSharesResponse: "ListShares",
        GetShareResponse: "GetShare",
        GetTableResponse: "GetTable",
        ListSchemasResponse: "ListSchemas",
        ListTablesResponse: "ListTables",
        QueryTableRequest: "QueryTable",
        QueryInfoRequest: "QueryInfo",
        TemporaryCredentialsResponse: "TemporaryCredentials",
        TemporaryCredentials: "Credentials",
    },
)
"""The names the document has always given its schemas."""

_TABLE = "/shares/{share}/schemas/{schema}/tables/{table}"
_NDJSON = CONTENT_TYPE.split(";")[0]


def _json_ok(body: type) -> tuple[Answer, ...]:
    return (Answer(200, "OK", Content(JSON, body)), *ERRORS)


def _version_ok() -> tuple[Answer, ...]:
    text = "The version is in the Delta-Table-Version header; no body."
    return (Answer(200, text, headers=(VERSION_HEADER,)), *ERRORS)


def _ndjson_ok(text: str) -> tuple[Answer, ...]:
    headers = (
        VERSION_HEADER,
        Header(
            CAPABILITIES_HEADER,
            str,
            "The response format used: responseformat=parquet|delta.",
        ),
        Header(
            FILE_ID_HASH_HEADER, str, "The request's fileidhash, in lowercase, when it sent one."
        ),
    )
    return (Answer(200, text, Content(_NDJSON, str), headers), *ERRORS)


def _get(
    path: str, op_id: str, summary: str, params: tuple[Parameter, ...], answers: tuple[Answer, ...]
) -> Operation:
    return Operation("get", path, op_id, summary, answers, params)


_CHANGES_PARAMS = (
    query("startingVersion", Int64, "First version of the range (inclusive)."),
    query(
        "startingTimestamp",
        str,
        "ISO 8601 time; the range starts at the first version committed at or after it.",
    ),
    query("endingVersion", Int64, "Last version of the range (default: latest)."),
    query(
        "endingTimestamp",
        str,
        "ISO 8601 time; the range ends at the last version committed at or before it.",
    ),
    query("includeHistoricalMetadata", bool, "Send metaData lines where the metadata changed."),
    query(
        "includeHistoricalProtocol",
        bool,
        "Send protocol lines, with their version, where the protocol changed (delta format).",
    ),
    query("maxFiles", Int64, "Files per page (positive)."),
    query("pageToken", str, "endStreamAction.nextPageToken of the previous page."),
)

LIST_SHARES = _get("/shares", "listShares", "List shares", PAGING, _json_ok(ListSharesResponse))
GET_SHARE = _get("/shares/{share}", "getShare", "Get a share", (SHARE,), _json_ok(GetShareResponse))
LIST_SCHEMAS = _get(
    "/shares/{share}/schemas",
    "listSchemas",
    "List schemas of a share",
    (SHARE, *PAGING),
    _json_ok(ListSchemasResponse),
)
LIST_TABLES = _get(
    "/shares/{share}/schemas/{schema}/tables",
    "listTables",
    "List tables of a schema",
    (SHARE, SCHEMA, *PAGING),
    _json_ok(ListTablesResponse),
)
LIST_ALL_TABLES = _get(
    "/shares/{share}/all-tables",
    "listAllTables",
    "List all tables of a share",
    (SHARE, *PAGING),
    _json_ok(ListTablesResponse),
)
GET_TABLE = _get(
    _TABLE,
    "getTable",
    "A table's identifiers and format (OpenSharing's Get Table)",
    TABLE_NAMES,
    _json_ok(GetTableResponse),
)
HEAD_TABLE = Operation(
    "head", _TABLE, "headTable", "Table version (legacy HEAD form)", _version_ok(), TABLE_NAMES
)
TABLE_VERSION = _get(
    f"{_TABLE}/version",
    "getTableVersion",
    "Table version",
    (
        *TABLE_NAMES,
        query(
            "startingTimestamp", str, "Earliest version committed at or after this ISO 8601 time."
        ),
    ),
    _version_ok(),
)
TABLE_METADATA = _get(
    f"{_TABLE}/metadata",
    "getTableMetadata",
    "Protocol and metadata of a table",
    (
        *TABLE_NAMES,
        CAPABILITIES,
        query("version", Int64, "Metadata as of this version (history sharing)."),
        query("timestamp", str, "Metadata as of this ISO 8601 time (history sharing)."),
    ),
    _ndjson_ok("A protocol line and a metaData line."),
)
QUERY_TABLE = Operation(
    "post",
    f"{_TABLE}/query",
    "queryTable",
    "Files of a table snapshot",
    _ndjson_ok(
        "A protocol line, a metaData line and one file line per file; with asyncquery=true "
        "in delta-sharing-capabilities, one queryStatus line with the queryId to poll."
    ),
    (*TABLE_NAMES, CAPABILITIES, FILE_ID_HASH),
    RequestBody(Content(JSON, QueryTableRequest)),
)
QUERY_INFO = Operation(
    "post",
    f"{_TABLE}/queries/{{queryId}}",
    "getQueryInfo",
    "An asynchronous query's status, then its pages",
    _ndjson_ok(
        "While the query is prepared, one queryStatus line (pending or failed); then the "
        "answer of queryTable, paged with maxFiles and pageToken."
    ),
    (*TABLE_NAMES, QUERY_ID, CAPABILITIES),
    RequestBody(Content(JSON, QueryInfoRequest)),
)
TABLE_CHANGES = _get(
    f"{_TABLE}/changes",
    "getTableChanges",
    "Change data feed of a version range (history sharing)",
    (*TABLE_NAMES, CAPABILITIES, FILE_ID_HASH, *_CHANGES_PARAMS),
    _ndjson_ok(
        "A protocol line, a metaData line, then one add, cdf or remove line per file with its "
        "version and timestamp; an endStreamAction line last when asked for or paged."
    ),
)
TABLE_CREDENTIALS = Operation(
    "post",
    f"{_TABLE}/temporary-table-credentials",
    "generateTemporaryTableCredential",
    "Read-only credentials for a table directory (tables offering dir)",
    _json_ok(TemporaryCredentialsResponse),
    TABLE_NAMES,
    RequestBody(Content(JSON, TemporaryCredentialsRequest)),
)
GET_OPENAPI = Operation(
    "get",
    "/openapi.json",
    "getOpenApi",
    "This document",
    (Answer(200, "OK", Content(JSON)),),
    security=[],
)
FILE_BATCH = Operation(
    "post",
    "/files",
    "getFileBatch",
    "Many table files on the server's disk in one answer, by their signed URLs (a deltaport "
    "extension; query and change answers of local tables name it in the "
    "Deltaport-File-Batch header)",
    (
        Answer(
            200,
            "For each URL in order, the line '{status} {length}' and then length bytes: the "
            "file (status 200) or the JSON error its GET would answer (403, 404; 413 for "
            f"files over {FILE_MAX_BYTES} bytes)",
            Content(MEDIA_TYPE),
        ),
        Answer(400, "Malformed body, or no or too many URLs", ERROR),
        Answer(413, "Body too big", ERROR),
    ),
    body=RequestBody(Content(JSON, FileBatchRequest), required=True),
    security=[],
)
GET_FILE = Operation(
    "get",
    "/files/{table_key}/{file_path}",
    "getFile",
    "A table file on the server's disk, by signed URL (HEAD and Range supported)",
    (
        Answer(200, "The file"),
        Answer(206, "The asked ranges"),
        Answer(400, "Malformed Range header (plain text)"),
        Answer(403, "Bad, expired or foreign signature"),
        Answer(404, "No such file"),
        Answer(416, "Unsatisfiable range"),
    ),
    (
        path_name("table_key"),
        Parameter("file_path", "path", str, "Path below the table root.", required=True),
        query("se", Int64, "Expiry (Unix seconds)."),
        query("sp", str, "Permissions (r)."),
        query("sig", str, "Signature."),
        query("rcp", str, "On a catalog server: the recipient and token the URL was handed to."),
        Parameter("Range", "header", str),
    ),
    security=[],
)

SHARING_OPERATIONS = tuple(
    path_limited(operation)
    for operation in (
        QUERY_TABLE,
        QUERY_INFO,
        TABLE_VERSION,
        TABLE_METADATA,
        TABLE_CHANGES,
        TABLE_CREDENTIALS,
        HEAD_TABLE,
        GET_TABLE,
        LIST_SHARES,
        GET_SHARE,
        LIST_SCHEMAS,
        LIST_TABLES,
        LIST_ALL_TABLES,
        GET_OPENAPI,
        FILE_BATCH,
        GET_FILE,
    )
)
"""Every operation under the endpoint of any server, in the order its routes are matched."""


def sharing_operations(*, catalog: bool = False) -> tuple[Operation, ...]:
    """The operations under the endpoint (``catalog``: of a server on a catalog database,
    with its OAuth token endpoint)."""
    return (*SHARING_OPERATIONS, OAUTH_TOKEN) if catalog else SHARING_OPERATIONS


def openapi_document(endpoint: str, *, catalog: bool = False) -> dict[str, Any]:
    """The document for a server whose sharing API lives under ``endpoint`` (with
    ``catalog``: on a catalog database, with its OAuth token endpoint)."""
    return generated(SHARING_API, endpoint, sharing_operations(catalog=catalog))
