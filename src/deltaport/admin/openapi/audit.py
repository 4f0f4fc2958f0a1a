"""The audit route (see :mod:`deltaport.admin.audit_api`) and its answer, which the handler
encodes."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from deltaport.admin.openapi.common import CATALOG_ONLY, ERROR, JSON, NO_TOKEN, query
from deltaport.observe.audit_filters import NAME_FILTER_LENGTHS, OPERATIONS
from deltaport.observe.audit_record import AuditRecord, iso_time
from deltaport.observe.audit_store import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE
from deltaport.protocol.openapi import Answer, Content, Operation

Count = Annotated[int, msgspec.Meta(ge=0)]


class AuditEntry(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    """An audit record as ``GET /api/audit`` answers it: the fields of
    :class:`~deltaport.observe.audit_record.AuditRecord` that are set, ``time`` in ISO 8601."""

    time: Annotated[str, msgspec.Meta(extra_json_schema={"format": "date-time"})]
    """When it began."""
    operation: str
    status: int
    duration_ms: Count
    id: str = ""
    recipient: str | None = None
    admin: str | None = None
    """The admin token's name: token-N."""
    client_address: str | None = None
    user_agent: str | None = None
    share: str | None = None
    table: str | None = None
    target: str | None = None
    """The recipient an admin change concerned."""
    version: Count | None = None
    end_version: Count | None = None
    files: Count | None = None
    bytes: Count | None = None
    error_code: str | None = None
    count: Annotated[int, msgspec.Meta(ge=1)] | None = None
    """How many refused requests a `refusedRequests` record summarises."""

    @classmethod
    def of(cls, record: AuditRecord) -> AuditEntry:
        fields = msgspec.structs.asdict(record)
        return cls(time=iso_time(fields.pop("time_ms")), **fields)


class AuditPage(msgspec.Struct):
    records: list[AuditEntry]
    next_page_token: str | None


def _text(max_length: int) -> Any:
    return Annotated[str, msgspec.Meta(max_length=max_length)]


_TIME = Annotated[str, msgspec.Meta(extra_json_schema={"format": "date-time"})]
_OPERATION: Any = Literal[OPERATIONS]

AUDIT = Operation(
    "get",
    "/api/audit",
    "audit",
    "Audit records, newest first." + CATALOG_ONLY,
    (
        Answer(200, "A page of records.", Content(JSON, AuditPage)),
        Answer(400, "A filter, the limit or the page token is invalid.", ERROR),
        Answer(NO_TOKEN.status, NO_TOKEN.description, ERROR),
        Answer(503, "The catalog database cannot be reached.", ERROR),
    ),
    (
        query(
            "recipient",
            _text(NAME_FILTER_LENGTHS["recipient"]),
            "Only this recipient's requests (any case).",
        ),
        query(
            "table",
            _text(NAME_FILTER_LENGTHS["table"]),
            "Only this table, `share.schema.table` (any case).",
        ),
        query("operation", _OPERATION, "Only this operation, e.g. `deltaSharingQueriedTable`."),
        query(
            "status",
            Annotated[int, msgspec.Meta(ge=100, le=599)],
            "Only answers with this HTTP status.",
        ),
        query("since", _TIME, "From this time on (ISO 8601)."),
        query("until", _TIME, "Before this time (ISO 8601)."),
        query(
            "limit",
            Annotated[int, msgspec.Meta(ge=0, le=MAX_PAGE_SIZE)],
            f"Records per page (0 or absent: {DEFAULT_PAGE_SIZE}).",
        ),
        query("page_token", str, "`next_page_token` of the previous page."),
    ),
)
AUDIT_OPERATIONS = (AUDIT,)
