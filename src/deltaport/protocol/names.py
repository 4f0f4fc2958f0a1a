"""Rules for share, schema and table names.

Names are compared case-insensitively. A valid name has 1 to 255 characters and none of
``.`` (it separates ``share.schema.table`` in profile URLs), ``/`` (it would change the
REST path), ``#`` (it separates the profile from the table in a table URL), whitespace or
control characters.
"""

from __future__ import annotations

MAX_NAME_LENGTH = 255
MAX_FULL_NAME_LENGTH = 3 * MAX_NAME_LENGTH + 2
"""The longest ``share.schema.table`` of valid names."""
_FORBIDDEN = frozenset("./#")


def name_key(name: str) -> str:
    """The key two names are compared by (case-insensitive)."""
    return name.casefold()


def name_problem(name: str) -> str | None:
    """Why ``name`` is not a valid object name, or None when it is."""
    if not name:
        return "must not be empty"
    if len(name) > MAX_NAME_LENGTH:
        return f"is {len(name)} characters long; at most {MAX_NAME_LENGTH} are allowed"
    for ch in name:
        if ch in _FORBIDDEN or ch.isspace() or not ch.isprintable():
            return f"contains the character {ch!r}, which is not allowed in names"
    return None
