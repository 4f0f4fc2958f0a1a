"""The bounds of what the catalog stores, checked before anything is written.

Every value a provider gives (through the admin API or the ``deltaport`` commands) is
checked here first, so that a refused value leaves nothing behind and a stored value can
always be shown again: a token lifetime or grace period that would end past the year 9999,
or a version no Delta log can reach, is refused rather than written. Each ``*_problem``
function answers why a value is out of bounds, or None; the caller raises its own error.
The bounds are listed in ``docs/server/catalog.md``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import timedelta

MAX_VERSION = 2**63 - 1
"""Delta versions are signed 64-bit numbers."""
MAX_DURATION_SECONDS = 100 * 365 * 86400
"""A token lifetime or grace period: at most 100 years (3,153,600,000 seconds)."""
MAX_TEXT_LENGTH = 4096
"""A comment, a partition filter, a location: at most this many characters."""
MAX_PROPERTIES = 100
MAX_PROPERTY_NAME_LENGTH = 255
MAX_PROPERTY_VALUE_LENGTH = 1024
MAX_AUXILIARY_LOCATIONS = 100


def lifetime_problem(seconds: float) -> str | None:
    """Why a token lifetime of ``seconds`` cannot be given (it must end in the future)."""
    if not 1 <= seconds <= MAX_DURATION_SECONDS:
        return f"must be between 1 and {MAX_DURATION_SECONDS} seconds (100 years)"
    return None


def grace_problem(seconds: float) -> str | None:
    """Why the old tokens of a rotation cannot stay valid ``seconds`` more (0: end now)."""
    if not 0 <= seconds <= MAX_DURATION_SECONDS:
        return f"must be between 0 and {MAX_DURATION_SECONDS} seconds (100 years)"
    return None


def version_problem(version: int) -> str | None:
    if not 0 <= version <= MAX_VERSION:
        return f"must be between 0 and {MAX_VERSION}"
    return None


def text_problem(text: str | None) -> str | None:
    """Why a comment, filter or location is too long, or None."""
    if text is not None and len(text) > MAX_TEXT_LENGTH:
        return f"is {len(text)} characters long; at most {MAX_TEXT_LENGTH} are allowed"
    return None


def properties_problem(properties: Mapping[str, str]) -> str | None:
    """Why a recipient's properties cannot be stored, or None."""
    if len(properties) > MAX_PROPERTIES:
        return f"{len(properties)} are given; at most {MAX_PROPERTIES} are allowed"
    for name, value in properties.items():
        if not 1 <= len(name) <= MAX_PROPERTY_NAME_LENGTH:
            return (
                f"a property name has {len(name)} characters; "
                f"1 to {MAX_PROPERTY_NAME_LENGTH} are allowed"
            )
        if len(value) > MAX_PROPERTY_VALUE_LENGTH:
            return (
                f"the value of {name[:80]!r} has {len(value)} characters; "
                f"at most {MAX_PROPERTY_VALUE_LENGTH} are allowed"
            )
    return None


def table_problem(
    location: str,
    start_version: int,
    partition_filter: str | None,
    auxiliary_locations: Sequence[str],
) -> str | None:
    """Why a table with these fields cannot be stored (its name is checked apart), or None."""
    checks = (
        ("startVersion", version_problem(start_version)),
        ("location", text_problem(location)),
        ("partitionFilter", text_problem(partition_filter)),
    )
    for field, problem in checks:
        if problem:
            return f"{field} {problem}"
    if len(auxiliary_locations) > MAX_AUXILIARY_LOCATIONS:
        return f"auxiliaryLocations: at most {MAX_AUXILIARY_LOCATIONS} are allowed"
    for i, auxiliary in enumerate(auxiliary_locations):
        problem = text_problem(auxiliary)
        if problem:
            return f"auxiliaryLocations[{i}] {problem}"
    return None


_DURATION = re.compile(r"^(\d{1,12})\s*([smhdw])$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_duration(text: str) -> timedelta:
    """``90d``, ``12h``, ``30m``, ``45s``, ``2w``: at most 100 years. Raises ValueError
    saying why (the caller raises its own error with that text)."""
    match = _DURATION.match(text.strip().lower())
    if not match:
        raise ValueError(f"not a duration: {text[:80]!r} (use e.g. 90d, 12h, 30m)")
    seconds = int(match.group(1)) * _UNITS[match.group(2)]
    if seconds > MAX_DURATION_SECONDS:
        raise ValueError(f"{text[:80]!r} is longer than 100 years ({MAX_DURATION_SECONDS}s)")
    return timedelta(seconds=seconds)
