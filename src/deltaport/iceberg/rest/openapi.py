"""The Iceberg catalog's OpenAPI document, served at ``<iceberg.path>/openapi.json`` with the
catalog's base path as its server: its routes (``/v1/...``), their parameters, and schemas
written after the Iceberg REST catalog's OpenAPI document for what this catalog answers.
The write operations a read-only catalog refuses are listed too, each answered 406
whoever asks."""

from __future__ import annotations

from typing import Any

from deltaport.iceberg.rest.routes import MAX_PAGE_SIZE

_STR = {"type": "string"}
_LONG = {"type": "integer", "format": "int64"}
_INT = {"type": "integer", "format": "int32"}
_STRING_MAP = {"type": "object", "additionalProperties": _STR}
_JSON = "application/json"


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _obj(props: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        out["required"] = required
    return out


def _array(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


_PAGE_TOKEN = {
    "type": ["string", "null"],
    "description": "Where the next page starts (null: this was the last page).",
}
_SNAPSHOT = _obj(
    {
        "snapshot-id": _LONG,
        "parent-snapshot-id": _LONG,
        "sequence-number": _LONG,
        "timestamp-ms": _LONG,
        "manifest-list": _STR,
        "schema-id": _INT,
        "first-row-id": _LONG,
        "added-rows": _LONG,
        "summary": {
            **_obj(
                {
                    "operation": {
                        "type": "string",
                        "enum": ["append", "replace", "overwrite", "delete"],
                    }
                },
                ["operation"],
            ),
            "additionalProperties": _STR,
            "description": "With delta.version and delta.timestamp: the Delta version served.",
        },
    },
    ["snapshot-id", "timestamp-ms", "manifest-list", "summary"],
)
_FIELD = _obj(
    {
        "id": _INT,
        "name": _STR,
        "type": {"description": "A primitive type's name, or a nested type's object."},
        "required": {"type": "boolean"},
        "doc": _STR,
    },
    ["id", "name", "type", "required"],
)
_SCHEMA = _obj(
    {"type": {"const": "struct"}, "schema-id": _INT, "fields": _array(_FIELD)},
    ["type", "fields"],
)
_PARTITION_SPEC = _obj(
    {
        "spec-id": _INT,
        "fields": _array(
            _obj(
                {"field-id": _INT, "source-id": _INT, "name": _STR, "transform": _STR},
                ["source-id", "transform", "name"],
            )
        ),
    },
    ["fields"],
)

SCHEMAS: dict[str, Any] = {
    "IcebergErrorResponse": _obj(
        {
            "error": _obj(
                {
                    "message": {**_STR, "description": "What went wrong, for people."},
                    "type": {
                        **_STR,
                        "description": "The exception's name, e.g. NoSuchTableException.",
                    },
                    "code": {"type": "integer", "minimum": 400, "maximum": 600},
                },
                ["message", "type", "code"],
            )
        },
        ["error"],
    ),
    "CatalogConfig": _obj(
        {
            "defaults": _STRING_MAP,
            "overrides": {
                **_STRING_MAP,
                "description": "prefix: shares/<share>, the share named as the warehouse.",
            },
            "endpoints": {**_array(_STR), "description": "The routes served, 'METHOD path'."},
        },
        ["defaults", "overrides"],
    ),
    "Namespace": {
        **_array(_STR),
        "description": "A namespace's levels: one, the share's schema.",
    },
    "ListNamespacesResponse": _obj(
        {"next-page-token": _PAGE_TOKEN, "namespaces": _array(_ref("Namespace"))}
    ),
    "GetNamespaceResponse": _obj(
        {"namespace": _ref("Namespace"), "properties": _STRING_MAP}, ["namespace"]
    ),
    "TableIdentifier": _obj({"namespace": _ref("Namespace"), "name": _STR}, ["namespace", "name"]),
    "ListTablesResponse": _obj(
        {"next-page-token": _PAGE_TOKEN, "identifiers": _array(_ref("TableIdentifier"))}
    ),
    "TableMetadata": _obj(
        {
            "format-version": {"type": "integer", "minimum": 1, "maximum": 3},
            "table-uuid": _STR,
            "location": _STR,
            "last-updated-ms": _LONG,
            "next-row-id": _LONG,
            "properties": _STRING_MAP,
            "schemas": _array(_SCHEMA),
            "current-schema-id": _INT,
            "last-column-id": _INT,
            "partition-specs": _array(_PARTITION_SPEC),
            "default-spec-id": _INT,
            "last-partition-id": _INT,
            "sort-orders": _array(_obj({"order-id": _INT, "fields": _array({})}, ["order-id"])),
            "default-sort-order-id": _INT,
            "snapshots": _array(_SNAPSHOT),
            "refs": {
                "type": "object",
                "additionalProperties": _obj(
                    {"type": {"enum": ["tag", "branch"]}, "snapshot-id": _LONG},
                    ["type", "snapshot-id"],
                ),
            },
            "current-snapshot-id": _LONG,
            "last-sequence-number": _LONG,
            "snapshot-log": _array(
                _obj({"snapshot-id": _LONG, "timestamp-ms": _LONG}, ["snapshot-id", "timestamp-ms"])
            ),
            "metadata-log": _array(
                _obj(
                    {"metadata-file": _STR, "timestamp-ms": _LONG},
                    ["metadata-file", "timestamp-ms"],
                )
            ),
        },
        ["format-version", "table-uuid"],
    ),
    "StorageCredential": _obj(
        {
            "prefix": {**_STR, "description": "The storage prefix the credential reaches."},
            "config": {**_STRING_MAP, "description": "FileIO properties (Iceberg's names)."},
        },
        ["prefix", "config"],
    ),
    "LoadTableResult": _obj(
        {
            "metadata-location": _STR,
            "metadata": _ref("TableMetadata"),
            "config": {
                **_STRING_MAP,
                "description": "A cloud table's FileIO properties (its temporary credential).",
            },
            "storage-credentials": _array(_ref("StorageCredential")),
        },
        ["metadata"],
    ),
    "LoadCredentialsResponse": _obj(
        {"storage-credentials": _array(_ref("StorageCredential"))}, ["storage-credentials"]
    ),
    "ReportMetricsRequest": {
        **_obj({"report-type": _STR, "table-name": _STR, "snapshot-id": _LONG}),
        "description": "A scan or commit report (accepted, logged by its report-type).",
    },
}

_ERRORS = {
    "400": "BadRequestException: a parameter or the body is malformed.",
    "401": "NotAuthorizedException: the bearer token is missing or wrong.",
    "403": "ForbiddenException: outside the recipient's IP access list.",
    "404": "NoSuchNamespaceException or NoSuchTableException: not there, or not granted.",
    "429": "TooManyRequestsException: over the recipient's rate limit, or too many failed "
    "tokens from this address; retry after the Retry-After seconds.",
    "503": "ServiceUnavailableException: the catalog cannot be read now; retry later.",
}


def _error(text: str) -> dict[str, Any]:
    return {"description": text, "content": {_JSON: {"schema": _ref("IcebergErrorResponse")}}}


def _errors(*codes: str) -> dict[str, Any]:
    return {code: _error(_ERRORS[code]) for code in codes}


_GUARDED = ("400", "401", "403", "429", "503")
"""What every route taking the recipient's token may answer, whatever it names."""


def _ok(schema: str) -> dict[str, Any]:
    return {"200": {"description": "OK", "content": {_JSON: {"schema": _ref(schema)}}}}


_NO_CONTENT = {"204": {"description": "It exists (no body)."}}


def _path(name: str, description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "path",
        "required": True,
        "description": description,
        "schema": _STR,
    }


def _query(name: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "description": description, **schema}


_SHARE = _path("share", "The share (the prefix shares/<share> that /v1/config gave).")
_SCHEMA_NAME = _path("schema", "The namespace: a schema of the share (one level).")
_TABLE_NAME = _path("table", "The table.")
_PAGING = [
    _query("pageToken", {"schema": _STR}, "next-page-token of the previous page."),
    _query(
        "pageSize",
        {"schema": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE_SIZE}},
        "Items per page (default 100).",
    ),
]


def _op(
    op_id: str, summary: str, params: list[dict[str, Any]], ok: dict[str, Any]
) -> dict[str, Any]:
    return {"operationId": op_id, "summary": summary, "parameters": params, "responses": ok}


def _refused(op_id: str, summary: str, params: list[dict[str, Any]]) -> dict[str, Any]:
    """A write operation of the specification, refused by this read-only catalog."""
    refusal = _error("UnsupportedOperationException: this catalog is read-only.")
    return {
        "operationId": op_id,
        "summary": f"{summary} (refused: the catalog is read-only)",
        "security": [],
        "parameters": params,
        "requestBody": {"required": False, "content": {_JSON: {"schema": {}}}},
        "responses": {"406": refusal},
    }


DOCUMENT_PATH = "/openapi.json"
"""Where the document is served, under the catalog's base path."""


def catalog_paths() -> dict[str, Any]:
    """The catalog's paths, under its base path (``iceberg.path``)."""
    prefix = "/v1/shares/{share}"
    namespace = f"{prefix}/namespaces/{{schema}}"
    table = f"{namespace}/tables/{{table}}"
    share, names, table_names = (
        [_SHARE],
        [_SHARE, _SCHEMA_NAME],
        [_SHARE, _SCHEMA_NAME, _TABLE_NAME],
    )
    guarded = _errors(*_GUARDED)
    paths: dict[str, dict[str, Any]] = {
        "/v1/config": {
            "get": _op(
                "icebergGetConfig",
                "The catalog of one share: its prefix and the routes served",
                [_query("warehouse", {"schema": _STR}, "The share (needed with two or more).")],
                {**_ok("CatalogConfig"), **guarded, **_errors("404")},
            )
        },
        f"{prefix}/namespaces": {
            "get": _op(
                "icebergListNamespaces",
                "The share's schemas (flat: with parent, an empty list)",
                [*share, *_PAGING, _query("parent", {"schema": _STR}, "A parent namespace.")],
                {**_ok("ListNamespacesResponse"), **guarded, **_errors("404")},
            ),
            "post": _refused("icebergCreateNamespace", "Create a namespace", share),
        },
        namespace: {
            "get": _op(
                "icebergGetNamespace",
                "A schema of the share",
                names,
                {**_ok("GetNamespaceResponse"), **guarded, **_errors("404")},
            ),
            "head": _op(
                "icebergNamespaceExists",
                "Whether the schema exists",
                names,
                {**_NO_CONTENT, **guarded, "404": {"description": "No such namespace."}},
            ),
            "delete": _refused("icebergDropNamespace", "Drop a namespace", names),
        },
        f"{namespace}/properties": {
            "post": _refused("icebergUpdateProperties", "Set namespace properties", names)
        },
        f"{namespace}/tables": {
            "get": _op(
                "icebergListTables",
                "The schema's tables offered to Iceberg readers",
                [*names, *_PAGING],
                {**_ok("ListTablesResponse"), **guarded, **_errors("404")},
            ),
            "post": _refused("icebergCreateTable", "Create a table", names),
        },
        f"{namespace}/register": {
            "post": _refused("icebergRegisterTable", "Register a table", names)
        },
        table: {
            "get": _op(
                "icebergLoadTable",
                "A table's Iceberg metadata at its latest Delta version (ETag; 304 to "
                "If-None-Match)",
                [
                    *table_names,
                    _query(
                        "snapshots",
                        {"schema": {"type": "string", "enum": ["all", "refs"]}},
                        "all (default): one snapshot per shared version; refs: the latest.",
                    ),
                    {"name": "If-None-Match", "in": "header", "required": False, "schema": _STR},
                ],
                {
                    "200": {
                        **_ok("LoadTableResult")["200"],
                        "headers": {"ETag": {"schema": _STR}},
                    },
                    "304": {"description": "Not modified since the ETag sent."},
                    **guarded,
                    **_errors("404"),
                    "500": _error("ServerErrorException: the table's data cannot be read."),
                },
            ),
            "head": _op(
                "icebergTableExists",
                "Whether the table exists (and is offered)",
                table_names,
                {**_NO_CONTENT, **guarded, "404": {"description": "No such table."}},
            ),
            "post": _refused("icebergUpdateTable", "Commit to a table", table_names),
            "delete": _refused("icebergDropTable", "Drop a table", table_names),
        },
        f"{table}/credentials": {
            "get": _op(
                "icebergLoadCredentials",
                "The table's temporary storage credential (none for a table on local disk)",
                table_names,
                {**_ok("LoadCredentialsResponse"), **guarded, **_errors("404")},
            )
        },
        f"{table}/metrics": {
            "post": {
                **_op(
                    "icebergReportMetrics",
                    "A reader's metrics report (accepted and logged)",
                    table_names,
                    {
                        "204": {"description": "Accepted."},
                        **guarded,
                        **_errors("404"),
                    },
                ),
                "requestBody": {
                    "required": True,
                    "content": {_JSON: {"schema": _ref("ReportMetricsRequest")}},
                },
            }
        },
        f"{prefix}/tables/rename": {
            "post": _refused("icebergRenameTable", "Rename a table", share)
        },
        f"{prefix}/transactions/commit": {
            "post": _refused("icebergCommitTransaction", "Commit to several tables", share)
        },
    }
    paths[DOCUMENT_PATH] = {
        "get": {
            "operationId": "icebergGetOpenApi",
            "summary": "This document",
            "security": [],
            "responses": {"200": {"description": "OK", "content": {_JSON: {}}}},
        }
    }
    return paths


def iceberg_document(base: str) -> dict[str, Any]:
    """The document of the catalog served under ``base``."""
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "deltaport Iceberg REST catalog (read-only)",
            "version": "1",
            "description": "Each share is a catalog (warehouse); the recipient's bearer "
            "token of the sharing API, with its grants.",
        },
        "servers": [{"url": base}],
        "security": [{"bearer": []}],
        "paths": catalog_paths(),
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": SCHEMAS,
        },
    }
