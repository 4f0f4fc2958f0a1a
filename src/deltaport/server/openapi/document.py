"""The OpenAPI 3.1 document of the sharing API, served at ``<endpoint>/openapi.json``: every
route under the endpoint, and nothing else (the listener's root routes and the Iceberg
catalog have documents of their own, each with its base path as its server). A test keeps
it equal to the real routes."""

from __future__ import annotations

from typing import Any

from deltaport.protocol.file_batch import FILE_MAX_BYTES, MAX_FILES, MEDIA_TYPE
from deltaport.server.openapi import credentials as openapi_credentials
from deltaport.server.openapi.catalog_routes import token_paths

_ERROR_CODES = {
    "400": "The request is malformed or a parameter has a wrong value.",
    "401": "The bearer token is missing or wrong.",
    "403": "The request is forbidden.",
    "404": "The share, schema, table or version does not exist.",
    "429": "Over the recipient's rate limit, or too many failed bearer tokens from this "
    "address (TOO_MANY_REQUESTS); retry after the Retry-After seconds.",
    "500": "The server failed; the message holds no details.",
    "503": "The server has not been able to read its catalog database for longer than "
    "catalogMaxStaleSeconds (TEMPORARILY_UNAVAILABLE); retry later.",
}

_TABLE = "/shares/{share}/schemas/{schema}/tables/{table}"


def _path_param(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "path",
        "required": True,
        "description": f"The {name} name (case-insensitive).",
        "schema": {"type": "string"},
    }


_QUERY_ID = {
    "name": "queryId",
    "in": "path",
    "required": True,
    "description": "The queryId of the queryStatus line that answered the query (opaque).",
    "schema": {"type": "string"},
}


def _query_param(name: str, type_: str, description: str) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": type_}
    if type_ == "integer":
        schema["format"] = "int64"
    return {
        "name": name,
        "in": "query",
        "required": False,
        "description": description,
        "schema": schema,
    }


_PAGING = [
    _query_param("maxResults", "integer", "Items per page (non-negative, default 500)."),
    _query_param("pageToken", "string", "nextPageToken of the previous page."),
]
_CAPABILITIES = {
    "name": "delta-sharing-capabilities",
    "in": "header",
    "required": False,
    "description": "responseformat=parquet|delta (a comma-separated list), "
    "readerfeatures=..., includeendstreamaction=true; separated by ';'.",
    "schema": {"type": "string"},
}
_FILE_ID_HASH = {
    "name": "fileidhash",
    "in": "header",
    "required": False,
    "description": "File ids as the MD5 (parquet) or SHA-256 (delta) of the file's path in "
    "the Delta log, in hex; echoed in the answer's fileidhash header. Any other value is a "
    "400 (INVALID_PARAMETER_VALUE).",
    "schema": {"type": "string", "enum": ["parquet", "delta"]},
}


_CHANGES_PARAMS = [
    _query_param("startingVersion", "integer", "First version of the range (inclusive)."),
    _query_param(
        "startingTimestamp",
        "string",
        "ISO 8601 time; the range starts at the first version committed at or after it.",
    ),
    _query_param("endingVersion", "integer", "Last version of the range (default: latest)."),
    _query_param(
        "endingTimestamp",
        "string",
        "ISO 8601 time; the range ends at the last version committed at or before it.",
    ),
    _query_param(
        "includeHistoricalMetadata", "boolean", "Send metaData lines where the metadata changed."
    ),
    _query_param(
        "includeHistoricalProtocol",
        "boolean",
        "Send protocol lines, with their version, where the protocol changed (delta format).",
    ),
    _query_param("maxFiles", "integer", "Files per page (positive)."),
    _query_param("pageToken", "string", "endStreamAction.nextPageToken of the previous page."),
]


def _errors() -> dict[str, Any]:
    return {
        code: {
            "description": text,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        }
        for code, text in _ERROR_CODES.items()
    }


def _json_ok(schema: str) -> dict[str, Any]:
    return {
        "200": {
            "description": "OK",
            "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{schema}"}}},
        },
        **_errors(),
    }


def _version_ok() -> dict[str, Any]:
    return {
        "200": {
            "description": "The version is in the Delta-Table-Version header; no body.",
            "headers": {"Delta-Table-Version": {"schema": {"type": "integer"}}},
        },
        **_errors(),
    }


def _ndjson_ok(text: str) -> dict[str, Any]:
    return {
        "200": {
            "description": text,
            "headers": {
                "Delta-Table-Version": {"schema": {"type": "integer"}},
                "delta-sharing-capabilities": {
                    "description": "The response format used: responseformat=parquet|delta.",
                    "schema": {"type": "string"},
                },
                "fileidhash": {
                    "description": "The request's fileidhash, in lowercase, when it sent one.",
                    "schema": {"type": "string"},
                },
            },
            "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
        },
        **_errors(),
    }


def _op(
    op_id: str, summary: str, params: list[dict[str, Any]], responses: dict[str, Any]
) -> dict[str, Any]:
    return {"operationId": op_id, "summary": summary, "parameters": params, "responses": responses}


def _names(*names: str) -> list[dict[str, Any]]:
    return [_path_param(n) for n in names]


def openapi_document(endpoint: str, *, catalog: bool = False) -> dict[str, Any]:
    """The document for a server whose sharing API lives under ``endpoint`` (with
    ``catalog``: on a catalog database, with its OAuth token endpoint)."""
    table_names = _names("share", "schema", "table")
    paths: dict[str, Any] = {
        "/shares": {"get": _op("listShares", "List shares", _PAGING, _json_ok("ListShares"))},
        "/shares/{share}": {
            "get": _op("getShare", "Get a share", _names("share"), _json_ok("GetShare"))
        },
        "/shares/{share}/schemas": {
            "get": _op(
                "listSchemas",
                "List schemas of a share",
                _names("share") + _PAGING,
                _json_ok("ListSchemas"),
            )
        },
        "/shares/{share}/schemas/{schema}/tables": {
            "get": _op(
                "listTables",
                "List tables of a schema",
                _names("share", "schema") + _PAGING,
                _json_ok("ListTables"),
            )
        },
        "/shares/{share}/all-tables": {
            "get": _op(
                "listAllTables",
                "List all tables of a share",
                _names("share") + _PAGING,
                _json_ok("ListTables"),
            )
        },
        _TABLE: {
            "get": _op(
                "getTable",
                "A table's identifiers and format (OpenSharing's Get Table)",
                table_names,
                _json_ok("GetTable"),
            ),
            "head": _op(
                "headTable", "Table version (legacy HEAD form)", table_names, _version_ok()
            ),
        },
        f"{_TABLE}/version": {
            "get": _op(
                "getTableVersion",
                "Table version",
                [
                    *table_names,
                    _query_param(
                        "startingTimestamp",
                        "string",
                        "Earliest version committed at or after this ISO 8601 time.",
                    ),
                ],
                _version_ok(),
            )
        },
        f"{_TABLE}/metadata": {
            "get": _op(
                "getTableMetadata",
                "Protocol and metadata of a table",
                [
                    *table_names,
                    _CAPABILITIES,
                    _query_param(
                        "version", "integer", "Metadata as of this version (history sharing)."
                    ),
                    _query_param(
                        "timestamp",
                        "string",
                        "Metadata as of this ISO 8601 time (history sharing).",
                    ),
                ],
                _ndjson_ok("A protocol line and a metaData line."),
            )
        },
        f"{_TABLE}/query": {
            "post": {
                **_op(
                    "queryTable",
                    "Files of a table snapshot",
                    [*table_names, _CAPABILITIES, _FILE_ID_HASH],
                    _ndjson_ok(
                        "A protocol line, a metaData line and one file line per file; with "
                        "asyncquery=true in delta-sharing-capabilities, one queryStatus line "
                        "with the queryId to poll."
                    ),
                ),
                "requestBody": {
                    "required": False,
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/QueryTable"}}
                    },
                },
            }
        },
        f"{_TABLE}/queries/{{queryId}}": {
            "post": {
                **_op(
                    "getQueryInfo",
                    "An asynchronous query's status, then its pages",
                    [*table_names, _QUERY_ID, _CAPABILITIES],
                    _ndjson_ok(
                        "While the query is prepared, one queryStatus line (pending or "
                        "failed); then the answer of queryTable, paged with maxFiles and "
                        "pageToken."
                    ),
                ),
                "requestBody": {
                    "required": False,
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/QueryInfo"}}
                    },
                },
            }
        },
        f"{_TABLE}/changes": {
            "get": _op(
                "getTableChanges",
                "Change data feed of a version range (history sharing)",
                [*table_names, _CAPABILITIES, _FILE_ID_HASH, *_CHANGES_PARAMS],
                _ndjson_ok(
                    "A protocol line, a metaData line, then one add, cdf or remove line per "
                    "file with its version and timestamp; an endStreamAction line last when "
                    "asked for or paged."
                ),
            )
        },
        f"{_TABLE}/temporary-table-credentials": openapi_credentials.credentials_operation(
            table_names, _json_ok("TemporaryCredentials")
        ),
        "/openapi.json": {
            "get": {
                "operationId": "getOpenApi",
                "summary": "This document",
                "security": [],
                "responses": {"200": {"description": "OK", "content": {"application/json": {}}}},
            }
        },
        "/files": {
            "post": {
                "operationId": "getFileBatch",
                "summary": "Many table files on the server's disk in one answer, by their "
                "signed URLs (a deltaport extension; query and change answers of local tables "
                "name it in the Deltaport-File-Batch header)",
                "security": [],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["files"],
                                "additionalProperties": False,
                                "properties": {
                                    "files": {
                                        "type": "array",
                                        "minItems": 1,
                                        "maxItems": MAX_FILES,
                                        "items": {"type": "string"},
                                        "description": "Signed file URLs as answers gave them.",
                                    }
                                },
                            }
                        }
                    },
                },
                "responses": {
                    "200": {
                        "description": "For each URL in order, the line '{status} {length}' "
                        "and then length bytes: the file (status 200) or the JSON error its GET "
                        f"would answer (403, 404; 413 for files over {FILE_MAX_BYTES} bytes)",
                        "content": {MEDIA_TYPE: {}},
                    },
                    "400": {"description": "Malformed body, or no or too many URLs"},
                    "413": {"description": "Body too big"},
                },
            }
        },
        "/files/{table_key}/{file_path}": {
            "get": {
                "operationId": "getFile",
                "summary": "A table file on the server's disk, by signed URL (HEAD and Range "
                "supported)",
                "security": [],
                "parameters": [
                    _path_param("table_key"),
                    {**_path_param("file_path"), "description": "Path below the table root."},
                    _query_param("se", "integer", "Expiry (Unix seconds)."),
                    _query_param("sp", "string", "Permissions (r)."),
                    _query_param("sig", "string", "Signature."),
                    _query_param(
                        "rcp",
                        "string",
                        "On a catalog server: the recipient and token the URL was handed to.",
                    ),
                    {
                        "name": "Range",
                        "in": "header",
                        "required": False,
                        "schema": {"type": "string"},
                    },
                ],
                "responses": {
                    "200": {"description": "The file"},
                    "206": {"description": "The asked ranges"},
                    "400": {"description": "Malformed Range header (plain text)"},
                    "403": {"description": "Bad, expired or foreign signature"},
                    "404": {"description": "No such file"},
                    "416": {"description": "Unsatisfiable range"},
                },
            }
        },
    }
    if catalog:
        paths.update(token_paths())
    return {
        "openapi": "3.1.0",
        "info": {"title": "deltaport Delta Sharing server", "version": "1"},
        "servers": [{"url": endpoint}],
        "security": [{"bearer": []}],
        "paths": paths,
        "components": {
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "client": {"type": "http", "scheme": "basic"},
            },
            "schemas": _SCHEMAS,
        },
    }


def _obj(props: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        out["required"] = required
    return out


_STR = {"type": "string"}
_PROPS = {"type": "object", "additionalProperties": {"type": "string"}}
_EXTRAS = {"displayName": _STR, "comment": _STR, "properties": _PROPS}
_SCHEMAS: dict[str, Any] = {
    "Error": _obj({"errorCode": _STR, "message": _STR}, ["errorCode", "message"]),
    "Share": _obj({"name": _STR, "id": _STR, **_EXTRAS}, ["name"]),
    "Schema": _obj({"name": _STR, "share": _STR, **_EXTRAS}, ["name", "share"]),
    "Table": _obj(
        {
            "name": _STR,
            "schema": _STR,
            "share": _STR,
            "shareId": _STR,
            "id": _STR,
            **_EXTRAS,
            **openapi_credentials.ACCESS_PROPERTIES,
        },
        ["name", "schema", "share"],
    ),
    "ListShares": _obj(
        {
            "items": {"type": "array", "items": {"$ref": "#/components/schemas/Share"}},
            "nextPageToken": _STR,
        }
    ),
    "GetShare": _obj({"share": {"$ref": "#/components/schemas/Share"}}, ["share"]),
    "GetTable": _obj(
        {
            "name": _STR,
            "schema": _STR,
            "share": _STR,
            "shareId": _STR,
            "id": _STR,
            "format": {"type": "string", "enum": ["delta"]},
        },
        ["name", "schema", "share", "format"],
    ),
    "ListSchemas": _obj(
        {
            "items": {"type": "array", "items": {"$ref": "#/components/schemas/Schema"}},
            "nextPageToken": _STR,
        }
    ),
    "ListTables": _obj(
        {
            "items": {"type": "array", "items": {"$ref": "#/components/schemas/Table"}},
            "nextPageToken": _STR,
        }
    ),
    "QueryTable": _obj(
        {
            "predicateHints": {"type": "array", "items": _STR},
            "jsonPredicateHints": _STR,
            "limitHint": {"type": "integer", "minimum": 0},
            "version": {"type": "integer", "minimum": 0},
            "timestamp": _STR,
            "startingVersion": {"type": "integer", "minimum": 0},
            "endingVersion": {"type": "integer", "minimum": 0},
            "maxFiles": {"type": "integer", "minimum": 1},
            "pageToken": _STR,
            "includeRefreshToken": {"type": "boolean"},
            "refreshToken": _STR,
            "idempotencyKey": _STR,
            "includeHistoricalProtocol": {"type": "boolean"},
        }
    ),
    "QueryInfo": _obj(
        {"maxFiles": {"type": "integer", "minimum": 1}, "pageToken": _STR, "queryId": _STR}
    ),
    **openapi_credentials.SCHEMAS,
}
