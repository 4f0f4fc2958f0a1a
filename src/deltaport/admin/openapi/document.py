"""The admin listener's OpenAPI document, generated from its route tables: the diff, this
document, metrics and the health probes here, the catalog, audit and Unity Catalog-shaped
routes in their modules."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

import msgspec

from deltaport.admin.openapi.audit import AUDIT_OPERATIONS
from deltaport.admin.openapi.catalog import CATALOG_OPERATIONS
from deltaport.admin.openapi.common import ERROR, JSON, NO_TOKEN, OPEN, query
from deltaport.admin.openapi.unity import DATABRICKS_CONFIG, UNITY_OPERATIONS
from deltaport.admin.unity.errors import UnityErrorBody
from deltaport.protocol.errors import ErrorBody
from deltaport.protocol.openapi import Answer, Api, Content, Operation, openapi_document
from deltaport.web import health

ADMIN_API = Api(
    title="deltaport admin API",
    description="On the admin listener only; every route takes an admin token as a bearer token.",
    security=[{"adminToken": []}],
    security_schemes={"adminToken": {"type": "http", "scheme": "bearer"}},
    schema_names={ErrorBody: "Error", UnityErrorBody: "UnityError"},
)


class DiffEntry(msgspec.Struct, forbid_unknown_fields=True):
    id: str
    """The commit's version."""
    timestamp: int
    """Commit time, ms since the epoch."""
    operation: str
    operation_type: Literal["create", "update", "delete", "unknown"]
    operation_content: dict[str, Any]


class Diff(msgspec.Struct, forbid_unknown_fields=True):
    """The commit diff (the lakeFS Delta differ's shape, with each side's files, rows,
    schema, property and protocol changes), or the row diff with `rows=true`. The diff
    package builds it as JSON (the command line prints the same); each kind of answer is
    decoded strictly into this Struct by the admin API's tests, so a member added, renamed
    or retyped without the document fails them."""

    table_diff_type: Literal["created", "dropped", "changed", "none"] | None = None
    table_format: str | None = None
    results: list[DiffEntry] | None = None
    base_version: int | None = None
    left: dict[str, Any] | None = None
    right: dict[str, Any] | None = None
    notes: list[str] | None = None
    next_page_token: str | None = None
    metrics: dict[str, Any] | None = None
    summary: dict[str, Any] | None = None
    """Row diff: counts and context."""
    changes: list[dict[str, Any]] | None = None


DIFF = Operation(
    "get",
    "/api/diff",
    "diff",
    "Two-dot diff LEFT..RIGHT of two tables, or rows by key",
    (
        Answer(200, "The diff.", Content(JSON, Diff)),
        Answer(400, "A parameter has a wrong value.", ERROR),
        Answer(401, "The admin token is missing or wrong.", ERROR),
        Answer(404, "A table or version does not exist.", ERROR),
        Answer(500, "The server failed; the message holds no details.", ERROR),
        Answer(504, "The diff took longer than admin.diffTimeoutSeconds (REQUEST_TIMEOUT).", ERROR),
    ),
    (
        query(
            "left",
            str,
            "Left table: a configured table `share.schema.table` or a location.",
            required=True,
        ),
        query("right", str, "Right table, as `left`.", required=True),
        query("base_version", int, "Common base version (default: found)."),
        query("limit", int, "Commits (default 1000) or row changes (100) per page."),
        query("page_token", str, "`next_page_token` of the previous page."),
        query("rows", bool, "Answer the row diff instead of the commit diff."),
        query("key", str, "Row diff: comma-separated key columns (default: whole rows)."),
        query("columns", str, "Row diff: comma-separated columns to compare."),
        query("where", str, "Row diff: only rows matching this SQL predicate."),
        query("left_version", int, "Left version (row diff, or one table at two versions)."),
        query("right_version", int, "Right version (as `left_version`)."),
    ),
)
OPENAPI = Operation(
    "get",
    "/api/openapi.json",
    "openapi",
    "This document",
    (Answer(200, "The OpenAPI document."),),
    security=OPEN,
)
_TEXT = Content("text/plain", str)
METRICS = Operation(
    "get",
    "/metrics",
    "metrics",
    "The process's Prometheus metrics (text exposition format)",
    (Answer(200, "The metrics.", _TEXT), NO_TOKEN),
)
# the probes are open here too, where every other route takes an admin token
LIVEZ = replace(health.LIVEZ, security=OPEN)
READYZ = replace(health.READYZ, security=OPEN)
ALWAYS_SERVED: tuple[Operation, ...] = (DIFF, OPENAPI, METRICS, LIVEZ, READYZ, DATABRICKS_CONFIG)
WITH_CATALOG = (*CATALOG_OPERATIONS, *AUDIT_OPERATIONS, *UNITY_OPERATIONS)
"""Served only on a server with a catalog database; documented on every server."""


def admin_openapi(
    operations: tuple[Operation, ...] = ALWAYS_SERVED + WITH_CATALOG,
) -> dict[str, Any]:
    """The document of ``operations`` (default: every route the admin listener may serve)."""
    return openapi_document(ADMIN_API, "/", operations)
