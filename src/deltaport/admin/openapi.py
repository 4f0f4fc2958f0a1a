"""The OpenAPI 3.1 document of the admin API (a test keeps it equal to the real routes)."""

from __future__ import annotations

from typing import Any

from deltaport.admin.metrics_api import metrics_paths
from deltaport.admin.openapi_catalog import catalog_paths
from deltaport.admin.openapi_unity import UNITY_ERROR, unity_paths


def _param(name: str, type_: str, description: str, required: bool = False) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": required,
        "description": description,
        "schema": {"type": type_},
    }


_DIFF_PARAMS = [
    _param(
        "left",
        "string",
        "Left table: a configured table `share.schema.table` or a location.",
        True,
    ),
    _param("right", "string", "Right table, as `left`.", True),
    _param("base_version", "integer", "Common base version (default: found)."),
    _param("limit", "integer", "Commits (default 1000) or row changes (100) per page."),
    _param("page_token", "string", "`next_page_token` of the previous page."),
    _param("rows", "boolean", "Answer the row diff instead of the commit diff."),
    _param("key", "string", "Row diff: comma-separated key columns (default: whole rows)."),
    _param("columns", "string", "Row diff: comma-separated columns to compare."),
    _param("where", "string", "Row diff: only rows matching this SQL predicate."),
    _param("left_version", "integer", "Left version (row diff, or one table at two versions)."),
    _param("right_version", "integer", "Right version (as `left_version`)."),
]

_ERROR = {
    "type": "object",
    "required": ["errorCode", "message"],
    "properties": {"errorCode": {"type": "string"}, "message": {"type": "string"}},
}

_ENTRY = {
    "type": "object",
    "required": ["id", "timestamp", "operation", "operation_type", "operation_content"],
    "properties": {
        "id": {"type": "string", "description": "The commit's version."},
        "timestamp": {"type": "integer", "description": "Commit time, ms since the epoch."},
        "operation": {"type": "string"},
        "operation_type": {"enum": ["create", "update", "delete", "unknown"]},
        "operation_content": {"type": "object"},
    },
}

_COMMIT_DIFF = {
    "type": "object",
    "description": "The commit diff (the lakeFS Delta differ's shape, with each side's "
    "files, rows, schema, property and protocol changes), or the row diff with `rows=true`.",
    "properties": {
        "table_diff_type": {"enum": ["created", "dropped", "changed", "none"]},
        "table_format": {"type": "string"},
        "results": {"type": "array", "items": _ENTRY},
        "base_version": {"type": ["integer", "null"]},
        "left": {"type": "object"},
        "right": {"type": "object"},
        "notes": {"type": "array", "items": {"type": "string"}},
        "next_page_token": {"type": ["string", "null"]},
        "metrics": {"type": "object"},
        "summary": {"type": "object", "description": "Row diff: counts and context."},
        "changes": {"type": "array", "items": {"type": "object"}},
    },
}


def _error(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


def admin_openapi() -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "deltaport admin API",
            "version": "1",
            "description": "On the admin listener only; every route takes an admin token "
            "as a bearer token.",
        },
        "components": {
            "securitySchemes": {"adminToken": {"type": "http", "scheme": "bearer"}},
            "schemas": {"Error": _ERROR, "UnityError": UNITY_ERROR, "Diff": _COMMIT_DIFF},
        },
        "security": [{"adminToken": []}],
        "paths": {
            "/api/diff": {
                "get": {
                    "operationId": "diff",
                    "summary": "Two-dot diff LEFT..RIGHT of two tables, or rows by key",
                    "parameters": _DIFF_PARAMS,
                    "responses": {
                        "200": {
                            "description": "The diff.",
                            "content": {
                                "application/json": {
                                    "schema": {"$ref": "#/components/schemas/Diff"}
                                }
                            },
                        },
                        "400": _error("A parameter has a wrong value."),
                        "401": _error("The admin token is missing or wrong."),
                        "404": _error("A table or version does not exist."),
                        "500": _error("The server failed; the message holds no details."),
                        "504": _error(
                            "The diff took longer than admin.diffTimeoutSeconds (REQUEST_TIMEOUT)."
                        ),
                    },
                }
            },
            "/api/openapi.json": {
                "get": {
                    "operationId": "openapi",
                    "summary": "This document",
                    "security": [],
                    "responses": {"200": {"description": "The OpenAPI document."}},
                }
            },
            **catalog_paths(),
            **metrics_paths(),
            **unity_paths(),
        },
    }
