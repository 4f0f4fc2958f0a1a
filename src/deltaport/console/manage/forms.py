"""The management forms' fields read and checked: each problem is kept with the field it
belongs to, so that the page shows it next to that field and nothing is changed."""

from __future__ import annotations

import re
from datetime import timedelta

from deltaport.catalog.limits import parse_duration, properties_problem
from deltaport.catalog.recipient_access import ip_access_problem
from deltaport.protocol.errors import InvalidParameterError

_ENTRY_SEPARATORS = re.compile(r"[\s,]+")


class FormErrors(dict[str, str]):
    """Problems by field name (``""``: the form as a whole)."""

    def check(self, field: str, problem: str | None) -> None:
        if problem and field not in self:
            self[field] = problem


def invalid(errors: FormErrors) -> InvalidParameterError:
    """The form's problems as the admin API would refuse them (for the audit record)."""
    return InvalidParameterError("; ".join(errors.values()) or "invalid form")


def checked(fields: dict[str, str], name: str) -> bool:
    return fields.get(name) in ("on", "true", "1")


def text(fields: dict[str, str], name: str) -> str:
    return fields.get(name, "").strip()


def properties(raw: str, errors: FormErrors, field: str = "properties") -> dict[str, str]:
    """``name=value`` lines (blank lines skipped)."""
    found: dict[str, str] = {}
    for number, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        name, sep, value = line.partition("=")
        if not sep or not name.strip():
            errors.check(field, f"line {number}: write name=value, got {line[:80]!r}")
            return {}
        found[name.strip()] = value.strip()
    errors.check(field, properties_problem(found))
    return found


def ip_entries(raw: str, max_entries: int, errors: FormErrors, field: str) -> list[str]:
    """Addresses and CIDR ranges, separated by commas, spaces or lines."""
    entries = [e for e in _ENTRY_SEPARATORS.split(raw) if e]
    errors.check(field, ip_access_problem(entries, max_entries))
    return entries


def duration(raw: str, errors: FormErrors, field: str) -> timedelta | None:
    """``90d``, ``12h``, ``30m``, ``45s``, ``2w``; empty: None."""
    if not raw:
        return None
    try:
        return parse_duration(raw)
    except ValueError as exc:
        errors.check(field, str(exc))
        return None


def whole_number(raw: str, errors: FormErrors, field: str) -> int:
    if not raw:
        return 0
    if not raw.isdigit() or len(raw) > 18:
        errors.check(field, f"a whole number of 0 or more, got {raw[:40]!r}")
        return 0
    return int(raw)
