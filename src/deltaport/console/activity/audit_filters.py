"""The audit log page's filters, read from GET query parameters (``recipient``, ``table``,
``operation``, ``status``, ``since``, ``until``) so that a link such as
``/console/audit?recipient=acme`` opens the filtered log; each bad value is named with the
field it came from."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.datastructures import QueryParams

from deltaport.observe import audit_record as ops
from deltaport.observe.audit_record import parse_time
from deltaport.observe.audit_store import AuditFilter

FIELDS = ("recipient", "table", "operation", "status", "since", "until")
OPERATIONS = (
    ops.LIST_SHARES,
    ops.GET_SHARE,
    ops.LIST_SCHEMAS,
    ops.LIST_TABLES,
    ops.LIST_ALL_TABLES,
    ops.GET_TABLE_VERSION,
    ops.GET_TABLE_METADATA,
    ops.QUERIED_TABLE,
    ops.QUERIED_TABLE_CHANGES,
    ops.TEMPORARY_CREDENTIAL,
    ops.GET_CATALOG,
    ops.CREATE_SHARE,
    ops.DELETE_SHARE,
    ops.UPDATE_SHARE,
    ops.UPDATE_PERMISSIONS,
    ops.CREATE_RECIPIENT,
    ops.DELETE_RECIPIENT,
    ops.UPDATE_RECIPIENT,
    ops.ROTATE_RECIPIENT_TOKEN,
    ops.REVOKE_RECIPIENT_TOKENS,
    ops.LIST_AUDIT,
)
"""The operations the filter offers, in the order of the audit log's documentation."""
MAX_TEXT = 256


@dataclass(frozen=True)
class Filters:
    """What the form shows (``form``, the values as given), the filter made of them, and
    the reason each refused field was refused (``errors``; the filter is None then)."""

    form: dict[str, str]
    where: AuditFilter | None
    errors: dict[str, str]

    @property
    def any(self) -> bool:
        return any(self.form.values())


def read_filters(params: QueryParams) -> Filters:
    form = {name: (params.get(name) or "").strip() for name in FIELDS}
    errors: dict[str, str] = {}
    for name in ("recipient", "table"):
        if len(form[name]) > MAX_TEXT:
            errors[name] = f"at most {MAX_TEXT} characters"
    if form["operation"] and form["operation"] not in OPERATIONS:
        errors["operation"] = "not an operation of the audit log"
    status = None
    if form["status"]:
        if form["status"].isdigit() and 100 <= int(form["status"]) <= 599:
            status = int(form["status"])
        else:
            errors["status"] = "an HTTP status, 100 to 599"
    times: dict[str, int | None] = {"since": None, "until": None}
    for name in times:
        if form[name]:
            try:
                times[name] = parse_time(form[name], name)
            except ValueError as exc:
                errors[name] = str(exc).partition(": ")[2]
    since, until = times["since"], times["until"]
    if since is not None and until is not None and until <= since:
        errors["until"] = "must be after since"
    if errors:
        return Filters(form, None, errors)
    where = AuditFilter(
        recipient=form["recipient"] or None,
        table=form["table"] or None,
        operation=form["operation"] or None,
        status=status,
        since=since,
        until=until,
    )
    return Filters(form, where, {})
