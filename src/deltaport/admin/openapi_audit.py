"""The audit route of the admin OpenAPI document (see :mod:`deltaport.admin.audit_api`)."""

from __future__ import annotations

from typing import Any

from deltaport.observe.audit_filters import NAME_FILTER_LENGTHS, OPERATIONS
from deltaport.observe.audit_store import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE


def _query(name: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": False,
        "description": description,
        "schema": schema,
    }


_TEXT = {"type": "string"}
_COUNT = {"type": "integer", "minimum": 0}
AUDIT_PARAMETERS = [
    _query(
        "recipient",
        {"type": "string", "maxLength": NAME_FILTER_LENGTHS["recipient"]},
        "Only this recipient's requests (any case).",
    ),
    _query(
        "table",
        {"type": "string", "maxLength": NAME_FILTER_LENGTHS["table"]},
        "Only this table, `share.schema.table` (any case).",
    ),
    _query(
        "operation",
        {"type": "string", "enum": list(OPERATIONS)},
        "Only this operation, e.g. `deltaSharingQueriedTable`.",
    ),
    _query(
        "status",
        {"type": "integer", "minimum": 100, "maximum": 599},
        "Only answers with this HTTP status.",
    ),
    _query("since", {"type": "string", "format": "date-time"}, "From this time on (ISO 8601)."),
    _query("until", {"type": "string", "format": "date-time"}, "Before this time (ISO 8601)."),
    _query(
        "limit",
        {"type": "integer", "minimum": 0, "maximum": MAX_PAGE_SIZE},
        f"Records per page (0 or absent: {DEFAULT_PAGE_SIZE}).",
    ),
    _query("page_token", _TEXT, "`next_page_token` of the previous page."),
]
AUDIT_RECORD = {
    "type": "object",
    "required": ["time", "id", "operation", "status", "durationMs"],
    "properties": {
        "time": {"type": "string", "format": "date-time", "description": "When it began."},
        "id": _TEXT,
        "operation": _TEXT,
        "status": {"type": "integer"},
        "durationMs": _COUNT,
        "recipient": _TEXT,
        "admin": {"type": "string", "description": "The admin token's name: token-N."},
        "clientAddress": _TEXT,
        "userAgent": _TEXT,
        "share": _TEXT,
        "table": _TEXT,
        "target": {"type": "string", "description": "The recipient an admin change concerned."},
        "version": _COUNT,
        "endVersion": _COUNT,
        "files": _COUNT,
        "bytes": _COUNT,
        "errorCode": _TEXT,
        "count": {
            "type": "integer",
            "minimum": 1,
            "description": "How many refused requests a `refusedRequests` record summarises.",
        },
    },
}


def audit_paths() -> dict[str, Any]:
    page = {
        "type": "object",
        "required": ["records", "next_page_token"],
        "properties": {
            "records": {"type": "array", "items": AUDIT_RECORD},
            "next_page_token": {"type": ["string", "null"]},
        },
    }
    return {
        "/api/audit": {
            "get": {
                "operationId": "audit",
                "summary": "Audit records, newest first. Only on a server with a catalog "
                "database (404 otherwise).",
                "parameters": AUDIT_PARAMETERS,
                "responses": {
                    "200": {
                        "description": "A page of records.",
                        "content": {"application/json": {"schema": page}},
                    },
                    "400": {"description": "A filter, the limit or the page token is invalid."},
                    "401": {"description": "The admin token is missing or wrong."},
                    "503": {"description": "The catalog database cannot be reached."},
                },
            }
        }
    }
