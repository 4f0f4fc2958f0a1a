"""One audit record: who did what to which table, when, from where, and how it ended.

Operations are named as Databricks' audit events name them where one exists. A record holds
names, numbers and codes only: never a token, client secret, signing key, storage key or
URL (a signed URL's query string is a credential), so that it can be shipped anywhere.
"""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec

from deltaport.protocol.names import MAX_FULL_NAME_LENGTH, MAX_NAME_LENGTH

# the sharing listener
LIST_SHARES = "deltaSharingListShares"
GET_SHARE = "deltaSharingGetShare"
LIST_SCHEMAS = "deltaSharingListSchemas"
LIST_TABLES = "deltaSharingListTables"
LIST_ALL_TABLES = "deltaSharingListAllTables"
GET_TABLE = "deltaSharingGetTable"
GET_TABLE_VERSION = "deltaSharingGetTableVersion"
GET_TABLE_METADATA = "deltaSharingGetTableMetadata"
QUERIED_TABLE = "deltaSharingQueriedTable"
QUERIED_TABLE_CHANGES = "deltaSharingQueriedTableChanges"
TEMPORARY_CREDENTIAL = "generateTemporaryTableCredential"
RETRIEVE_RECIPIENT_TOKEN = "retrieveRecipientToken"
"""An activation link downloaded (the profile it holds handed out)."""
GET_ACTIVATION_URL_INFO = "getActivationUrlInfo"
OAUTH_TOKEN = "generateRecipientOAuthToken"
"""An OAuth access token asked for (deltaport's own name: Databricks has none for it)."""
# the Iceberg REST catalog on the sharing listener (no Databricks event exists for these)
ICEBERG_GET_CONFIG = "icebergGetConfig"
ICEBERG_LIST_NAMESPACES = "icebergListNamespaces"
ICEBERG_GET_NAMESPACE = "icebergGetNamespace"
ICEBERG_LIST_TABLES = "icebergListTables"
ICEBERG_LOAD_TABLE = "icebergLoadTable"
ICEBERG_LOAD_CREDENTIALS = "icebergLoadCredentials"
ICEBERG_REPORT_METRICS = "icebergReportMetrics"
# the admin listener: catalog changes and reads
CREATE_SHARE = "createShare"
DELETE_SHARE = "deleteShare"
UPDATE_SHARE = "updateShare"
CREATE_RECIPIENT = "createRecipient"
DELETE_RECIPIENT = "deleteRecipient"
UPDATE_RECIPIENT = "updateRecipient"
ROTATE_RECIPIENT_TOKEN = "rotateRecipientToken"
REVOKE_RECIPIENT_TOKENS = "revokeRecipientTokens"
UPDATE_PERMISSIONS = "updatePermissions"
LIST_SHARES_ADMIN = "listShares"
GET_SHARE_ADMIN = "getShare"
GET_SHARE_PERMISSIONS = "getSharePermissions"
LIST_RECIPIENTS = "listRecipients"
GET_RECIPIENT = "getRecipient"
GET_RECIPIENT_SHARE_PERMISSIONS = "getRecipientSharePermissions"
GET_CATALOG = "getCatalog"
LIST_AUDIT = "listAuditRecords"
# deltaport's own: many refused requests from one address in one record
REFUSED_REQUESTS = "refusedRequests"

USER_AGENT_LENGTH = 256
"""A longer user agent is cut to this many characters (it is the client's to choose)."""
CUT = "…"
"""Ends a text field cut to its bound. A cut name is one character longer than the
longest valid name, so it is never taken for one."""
_TEXT_BOUNDS = {
    "id": 64,
    "operation": 64,
    "recipient": MAX_NAME_LENGTH,
    "admin": MAX_NAME_LENGTH,
    "client_address": 64,
    "user_agent": USER_AGENT_LENGTH,
    "share": MAX_NAME_LENGTH,
    "table": MAX_FULL_NAME_LENGTH,
    "target": MAX_NAME_LENGTH,
    "error_code": 64,
}
_NUMBERS = ("version", "end_version", "files", "bytes", "count")
"""The numbers a request may name (the others the server measures itself)."""
_LARGEST = 2**63 - 1
"""What a database's BIGINT holds."""


class AnsweredFiles(msgspec.Struct, frozen=True):
    """What a table answer listing files carries, from the table service's typed result:
    its ``version`` (the start of a version range), the range's ``end_version`` as asked,
    and how many ``files`` it lists."""

    version: int
    files: int
    end_version: int | None = None


class AuditRecord(msgspec.Struct, kw_only=True, omit_defaults=True, rename="camel"):
    """``recipient`` is set for the sharing listener's requests (None while the token is
    not yet known to be valid), ``admin`` for the admin listener's: the admin token's name
    (``token-1`` for the first configured token), never the token. ``table`` is
    ``share.schema.table``; ``version`` a snapshot's version or the start of a range that
    ends at ``end_version``; ``files`` and ``bytes`` what the answer listed and weighed."""

    time_ms: int
    operation: str
    status: int
    duration_ms: int
    id: str = ""
    recipient: str | None = None
    admin: str | None = None
    client_address: str | None = None
    user_agent: str | None = None
    share: str | None = None
    table: str | None = None
    target: str | None = None
    """The recipient an admin change concerned (a grant's, a rotation's)."""
    version: int | None = None
    end_version: int | None = None
    files: int | None = None
    bytes: int | None = None
    error_code: str | None = None
    count: int | None = None
    """How many requests a summary of refused requests (:data:`REFUSED_REQUESTS`) stands
    for; absent on the record of one request."""


def bounded(record: AuditRecord) -> AuditRecord:
    """``record`` with every field within its bound (changed in place): a longer text cut
    and ended with :data:`CUT`, a number outside what the database holds dropped, so that
    no request, whatever it sends, makes a record of more than about 2,300 characters."""
    for name, limit in _TEXT_BOUNDS.items():
        value = getattr(record, name)
        if value is not None and len(value) > limit:
            setattr(record, name, value[:limit] + CUT)
    for name in _NUMBERS:
        number = getattr(record, name)
        if number is not None and not -_LARGEST <= number <= _LARGEST:
            setattr(record, name, None)
    return record


def iso_time(time_ms: int) -> str:
    """``time_ms`` as an ISO 8601 UTC time with milliseconds."""
    moment = datetime.fromtimestamp(time_ms / 1000, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_time(text: str, name: str) -> int:
    """An ISO 8601 time (``2026-11-26``, ``2026-11-26T14:00:00Z``; without a zone: UTC) as
    milliseconds since the epoch; a :class:`ValueError` naming ``name`` otherwise."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"{name}: {text[:40]!r} is not an ISO 8601 time such as 2026-11-26T14:00:00Z"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def as_json(record: AuditRecord) -> dict[str, object]:
    """The record as a JSON object: ``time`` in ISO 8601, then the other fields set."""
    fields = msgspec.to_builtins(record)
    fields.pop("timeMs")
    return {"time": iso_time(record.time_ms), **fields}
