"""The Iceberg catalog's route table, served at ``<iceberg.path>/openapi.json`` with the
catalog's base path as its server: each operation once, its parameters, and its bodies
named by the structs of :mod:`deltaport.iceberg.model` that the routes encode and decode.

The catalog builds its routes from these operations
(:func:`~deltaport.web.operation_routes.operation_route`), and serves the document
:func:`~deltaport.protocol.openapi.openapi_document` generates from them; the mount checks
the two name the same operations. The write operations of the specification, which a
read-only catalog refuses, are declared too: each answered 406 whoever asks."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from deltaport.iceberg.model.catalog import (
    CatalogConfig,
    GetNamespaceResponse,
    IcebergErrorResponse,
    ListNamespacesResponse,
    ListTablesResponse,
    LoadCredentialsResponse,
    LoadTableResult,
    ReportMetricsRequest,
)
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

JSON = "application/json"
DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000
SNAPSHOTS = ("all", "refs")
"""What ``loadTable``'s ``snapshots`` may ask for."""

ICEBERG_API = Api(
    title="deltaport Iceberg REST catalog (read-only)",
    description="Each share is a catalog (warehouse); the recipient's bearer token of the "
    "sharing API, with its grants.",
    security=[{"bearer": []}],
    security_schemes={"bearer": {"type": "http", "scheme": "bearer"}},
)

_ERROR = Content(JSON, IcebergErrorResponse)


def _error(status: int, text: str) -> Answer:
    return Answer(status, text, _ERROR)


_GUARDED = (
    _error(400, "BadRequestException: a parameter or the body is malformed."),
    _error(401, "NotAuthorizedException: the bearer token is missing or wrong."),
    _error(403, "ForbiddenException: outside the recipient's IP access list."),
    _error(
        429,
        "TooManyRequestsException: over the recipient's rate limit, or too many failed "
        "tokens from this address; retry after the Retry-After seconds.",
    ),
    _error(
        414,
        "BadRequestException (code 414): a segment of the path is longer than 767 "
        "characters (a table's full name).",
    ),
    _error(431, "BadRequestException (code 431): the request's headers pass 16 KiB."),
    _error(503, "ServiceUnavailableException: the catalog cannot be read now; retry later."),
)
"""What every route taking the recipient's token may answer, whatever it names."""
_NOT_FOUND = _error(
    404, "NoSuchNamespaceException or NoSuchTableException: not there, or not granted."
)


def _ok(body: type, *more: Answer) -> tuple[Answer, ...]:
    return _sorted(Answer(200, "OK", Content(JSON, body)), *_GUARDED, _NOT_FOUND, *more)


def _exists(missing: str) -> tuple[Answer, ...]:
    return _sorted(Answer(204, "It exists (no body)."), *_GUARDED, Answer(404, missing))


def _sorted(*answers: Answer) -> tuple[Answer, ...]:
    return tuple(sorted(answers, key=lambda a: a.status))


def _path(name: str, description: str) -> Parameter:
    return Parameter(name, "path", str, description, required=True)


def _query(name: str, schema: Any, description: str) -> Parameter:
    return Parameter(name, "query", schema, description)


_SHARE = (_path("share", "The share (the prefix shares/<share> that /v1/config gave)."),)
_NAMES = (*_SHARE, _path("schema", "The namespace: a schema of the share (one level)."))
_TABLE_NAMES = (*_NAMES, _path("table", "The table."))
_PAGING = (
    _query("pageToken", str, "next-page-token of the previous page."),
    _query(
        "pageSize",
        Annotated[int, msgspec.Meta(ge=1, le=MAX_PAGE_SIZE)],
        f"Items per page (default {DEFAULT_PAGE_SIZE}).",
    ),
)

_PREFIX = "/v1/shares/{share}"
_NAMESPACE = _PREFIX + "/namespaces/{schema}"
_TABLE = _NAMESPACE + "/tables/{table}"


def _get(
    path: str, op_id: str, summary: str, params: tuple[Parameter, ...], answers: tuple[Answer, ...]
) -> Operation:
    return Operation("get", path, op_id, summary, answers, params)


def _head(path: str, op_id: str, summary: str, params: tuple[Parameter, ...]) -> Operation:
    missing = "No such table." if path == _TABLE else "No such namespace."
    return Operation("head", path, op_id, summary, _exists(missing), params)


def _refused(
    method: str, path: str, op_id: str, summary: str, params: tuple[Parameter, ...]
) -> Operation:
    """A write operation of the specification, refused by this read-only catalog."""
    return Operation(
        method,
        path,
        op_id,
        f"{summary} (refused: the catalog is read-only)",
        (_error(406, "UnsupportedOperationException: this catalog is read-only."),),
        params,
        RequestBody(Content(JSON, Any)),
        security=[],
    )


GET_CONFIG = _get(
    "/v1/config",
    "icebergGetConfig",
    "The catalog of one share: its prefix and the routes served",
    (_query("warehouse", str, "The share (needed with two or more)."),),
    _ok(CatalogConfig),
)
LIST_NAMESPACES = _get(
    _PREFIX + "/namespaces",
    "icebergListNamespaces",
    "The share's schemas (flat: with parent, an empty list)",
    (*_SHARE, *_PAGING, _query("parent", str, "A parent namespace.")),
    _ok(ListNamespacesResponse),
)
GET_NAMESPACE = _get(
    _NAMESPACE, "icebergGetNamespace", "A schema of the share", _NAMES, _ok(GetNamespaceResponse)
)
NAMESPACE_EXISTS = _head(_NAMESPACE, "icebergNamespaceExists", "Whether the schema exists", _NAMES)
LIST_TABLES = _get(
    _NAMESPACE + "/tables",
    "icebergListTables",
    "The schema's tables offered to Iceberg readers",
    (*_NAMES, *_PAGING),
    _ok(ListTablesResponse),
)
LOAD_TABLE = Operation(
    "get",
    _TABLE,
    "icebergLoadTable",
    "A table's Iceberg metadata at its latest Delta version (ETag; 304 to If-None-Match)",
    _sorted(
        Answer(200, "OK", Content(JSON, LoadTableResult), (Header("ETag", str),)),
        Answer(304, "Not modified since the ETag sent."),
        *_GUARDED,
        _NOT_FOUND,
        _error(500, "ServerErrorException: the table's data cannot be read."),
    ),
    (
        *_TABLE_NAMES,
        _query(
            "snapshots",
            Annotated[str, msgspec.Meta(extra_json_schema={"enum": list(SNAPSHOTS)})],
            "all (default): one snapshot per shared version; refs: the latest.",
        ),
        Parameter("If-None-Match", "header", str),
    ),
)
TABLE_EXISTS = _head(
    _TABLE, "icebergTableExists", "Whether the table exists (and is offered)", _TABLE_NAMES
)
LOAD_CREDENTIALS = _get(
    _TABLE + "/credentials",
    "icebergLoadCredentials",
    "The table's temporary storage credential (none for a table on local disk)",
    _TABLE_NAMES,
    _ok(LoadCredentialsResponse),
)
REPORT_METRICS = Operation(
    "post",
    _TABLE + "/metrics",
    "icebergReportMetrics",
    "A reader's metrics report (accepted and logged)",
    _sorted(
        Answer(204, "Accepted."),
        *_GUARDED,
        _NOT_FOUND,
        _error(413, "BadRequestException (code 413): the body passes maxRequestBodyBytes."),
    ),
    _TABLE_NAMES,
    RequestBody(Content(JSON, ReportMetricsRequest), required=True),
)

CATALOG_READS = (
    LIST_NAMESPACES,
    GET_NAMESPACE,
    NAMESPACE_EXISTS,
    LIST_TABLES,
    LOAD_TABLE,
    TABLE_EXISTS,
    LOAD_CREDENTIALS,
    REPORT_METRICS,
)
"""The routes of a share's catalog, in the order ``/v1/config`` names them."""

REFUSED_WRITES = (
    _refused(
        "post", _PREFIX + "/namespaces", "icebergCreateNamespace", "Create a namespace", _SHARE
    ),
    _refused("delete", _NAMESPACE, "icebergDropNamespace", "Drop a namespace", _NAMES),
    _refused(
        "post",
        _NAMESPACE + "/properties",
        "icebergUpdateProperties",
        "Set namespace properties",
        _NAMES,
    ),
    _refused("post", _NAMESPACE + "/tables", "icebergCreateTable", "Create a table", _NAMES),
    _refused("post", _NAMESPACE + "/register", "icebergRegisterTable", "Register a table", _NAMES),
    _refused("post", _TABLE, "icebergUpdateTable", "Commit to a table", _TABLE_NAMES),
    _refused("delete", _TABLE, "icebergDropTable", "Drop a table", _TABLE_NAMES),
    _refused("post", _PREFIX + "/tables/rename", "icebergRenameTable", "Rename a table", _SHARE),
    _refused(
        "post",
        _PREFIX + "/transactions/commit",
        "icebergCommitTransaction",
        "Commit to several tables",
        _SHARE,
    ),
)

GET_OPENAPI = Operation(
    "get",
    "/openapi.json",
    "icebergGetOpenApi",
    "This document",
    (Answer(200, "OK", Content(JSON)),),
    security=[],
)

ICEBERG_OPERATIONS = (GET_CONFIG, *CATALOG_READS, *REFUSED_WRITES, GET_OPENAPI)


def config_endpoints() -> list[str]:
    """The routes of a share's catalog as ``/v1/config`` names them: ``METHOD path`` in the
    specification's names (``{prefix}`` for ``shares/{share}``, ``{namespace}``)."""
    return [
        f"{op.method.upper()} "
        + op.path.replace("shares/{share}", "{prefix}").replace("{schema}", "{namespace}")
        for op in CATALOG_READS
    ]


def iceberg_document(base: str) -> dict[str, Any]:
    """The document of the catalog served under ``base``."""
    return generated(ICEBERG_API, base, ICEBERG_OPERATIONS)
