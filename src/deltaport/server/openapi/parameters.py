"""The parameters and answers the sharing listener's operations share: names in paths (with
the lengths the listener accepts), paging, the capabilities header, the error answers."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated

import msgspec

from deltaport.protocol.capabilities import HEADER as CAPABILITIES_HEADER
from deltaport.protocol.errors import ErrorBody
from deltaport.protocol.file_id_hash import HEADER as FILE_ID_HASH_HEADER
from deltaport.protocol.names import MAX_FULL_NAME_LENGTH
from deltaport.protocol.openapi import Answer, Content, Header, Operation, Parameter
from deltaport.server.paging.query_ids import MAX_QUERY_ID_LENGTH

JSON = "application/json"

Name = Annotated[str, msgspec.Meta(max_length=MAX_FULL_NAME_LENGTH)]
"""A path segment: a longer one is answered 414 before any route sees it."""
QueryId = Annotated[str, msgspec.Meta(max_length=MAX_QUERY_ID_LENGTH)]
Int64 = Annotated[int, msgspec.Meta(extra_json_schema={"format": "int64"})]

ERROR = Content(JSON, ErrorBody)
SCHEMA_NAMES: dict[type, str] = {ErrorBody: "Error"}
"""The name the documents have always given the error body."""

PATH_TOO_LONG = Answer(
    414,
    f"A segment of the path is longer than {MAX_FULL_NAME_LENGTH} characters ("
    f"{MAX_QUERY_ID_LENGTH} for a query id) (REQUEST_PATH_TOO_LONG); nothing is recorded.",
    ERROR,
)

ERRORS = tuple(
    Answer(status, text, ERROR)
    for status, text in (
        (400, "The request is malformed or a parameter has a wrong value."),
        (401, "The bearer token is missing or wrong."),
        (403, "The request is forbidden."),
        (404, "The share, schema, table or version does not exist."),
        (
            429,
            "Over the recipient's rate limit, or too many failed bearer tokens from this "
            "address (TOO_MANY_REQUESTS); retry after the Retry-After seconds.",
        ),
        (500, "The server failed; the message holds no details."),
        (
            503,
            "The server has not been able to read its catalog database for longer than "
            "catalogMaxStaleSeconds (TEMPORARILY_UNAVAILABLE); retry later.",
        ),
    )
)
"""The error answers of every operation a bearer token opens."""


def path_limited(operation: Operation) -> Operation:
    """``operation``, with the 414 the listener answers when it has a path parameter (a
    path without any cannot have a segment too long and still be this operation's)."""
    if not operation.path_names():
        return operation
    answers = sorted((*operation.answers, PATH_TOO_LONG), key=lambda a: a.status)
    return replace(operation, answers=tuple(answers))


def path_name(name: str, description: str | None = None) -> Parameter:
    return Parameter(
        name, "path", Name, description or f"The {name} name (case-insensitive).", required=True
    )


def query(name: str, schema: object, description: str) -> Parameter:
    return Parameter(name, "query", schema, description)


SHARE, SCHEMA, TABLE = path_name("share"), path_name("schema"), path_name("table")
TABLE_NAMES = (SHARE, SCHEMA, TABLE)
QUERY_ID = Parameter(
    "queryId",
    "path",
    QueryId,
    "The queryId of the queryStatus line that answered the query (opaque).",
    required=True,
)
PAGING = (
    query("maxResults", Int64, "Items per page (non-negative, default 500)."),
    query("pageToken", str, "nextPageToken of the previous page."),
)
CAPABILITIES = Parameter(
    CAPABILITIES_HEADER,
    "header",
    str,
    "responseformat=parquet|delta (a comma-separated list), readerfeatures=..., "
    "includeendstreamaction=true; separated by ';'.",
)
FILE_ID_HASH = Parameter(
    FILE_ID_HASH_HEADER,
    "header",
    Annotated[str, msgspec.Meta(extra_json_schema={"enum": ["parquet", "delta"]})],
    "File ids as the MD5 (parquet) or SHA-256 (delta) of the file's path in the Delta log, "
    "in hex; echoed in the answer's fileidhash header. Any other value is a 400 "
    "(INVALID_PARAMETER_VALUE).",
)

TABLE_VERSION_HEADER = "Delta-Table-Version"
VERSION_HEADER = Header(TABLE_VERSION_HEADER, int)
