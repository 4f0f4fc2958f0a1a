"""The filters of the audit log, read from text (the admin API's query parameters, the
console's form): one rule for both, each bad value named with the field it came from, so
that nothing a filter holds reaches the database unchecked (a status past a BIGINT was a
500)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from deltaport.observe import audit_record as ops
from deltaport.observe.audit_operations import OPERATIONS as ROUTES
from deltaport.observe.audit_record import CUT, parse_time
from deltaport.observe.audit_store import AuditFilter
from deltaport.protocol.names import MAX_FULL_NAME_LENGTH, MAX_NAME_LENGTH

FIELDS = ("recipient", "table", "operation", "status", "since", "until")
OPERATIONS = (*dict.fromkeys(ROUTES.values()), ops.REFUSED_REQUESTS)
"""Every operation a record may carry, each once, in the order of the audit table."""
NAME_FILTER_LENGTHS = {
    "recipient": MAX_NAME_LENGTH + len(CUT),
    "table": MAX_FULL_NAME_LENGTH + len(CUT),
}
"""A name filter matches a name as long as the longest a record keeps (a cut one)."""
_STATUS = re.compile(r"[1-5][0-9][0-9]")


def audit_filter(form: Mapping[str, str]) -> tuple[AuditFilter | None, dict[str, str]]:
    """The filter ``form`` (a value per field of :data:`FIELDS`, empty for none) asks
    for, or None with the reason each refused field was refused."""
    errors: dict[str, str] = {}
    for name, limit in NAME_FILTER_LENGTHS.items():
        if len(form.get(name, "")) > limit:
            errors[name] = f"at most {limit} characters"
        elif not form.get(name, "").isprintable():
            errors[name] = "must not hold control characters"
    operation = form.get("operation", "")
    if operation and operation not in OPERATIONS:
        errors["operation"] = "not an operation of the audit log"
    status = None
    if form.get("status"):
        if _STATUS.fullmatch(form["status"]):
            status = int(form["status"])
        else:
            errors["status"] = "an HTTP status, 100 to 599"
    times: dict[str, int | None] = {"since": None, "until": None}
    for name in times:
        if form.get(name):
            try:
                times[name] = parse_time(form[name], name)
            except ValueError as exc:
                errors[name] = str(exc).partition(": ")[2]
    since, until = times["since"], times["until"]
    if since is not None and until is not None and until <= since:
        errors["until"] = "must be after since"
    if errors:
        return None, errors
    where = AuditFilter(
        recipient=form.get("recipient") or None,
        table=form.get("table") or None,
        operation=operation or None,
        status=status,
        since=since,
        until=until,
    )
    return where, {}


def refusal(errors: Mapping[str, str]) -> str:
    """``errors`` in one message: ``status: an HTTP status, 100 to 599; until: ...``."""
    return "; ".join(f"{name}: {reason}" for name, reason in errors.items())
