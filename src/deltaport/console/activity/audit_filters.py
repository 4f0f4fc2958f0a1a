"""The audit log page's filters, read from GET query parameters (``recipient``, ``table``,
``operation``, ``status``, ``since``, ``until``) so that a link such as
``/console/audit?recipient=acme`` opens the filtered log; each bad value is named with the
field it came from, by the rule the admin API's filters follow
(:mod:`deltaport.observe.audit_filters`)."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.datastructures import QueryParams

from deltaport.observe.audit_filters import FIELDS, OPERATIONS, audit_filter
from deltaport.observe.audit_store import AuditFilter

__all__ = ["OPERATIONS", "Filters", "read_filters"]


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
    where, errors = audit_filter(form)
    return Filters(form, where, errors)
