"""Quoting client input in messages: never more than a short, bounded excerpt.

Error bodies and log lines name what a request asked for, and a request can carry
megabytes in a name, a hint or a parameter; echoing it whole would let one request grow
every log and error body by as much.
"""

from __future__ import annotations

ECHO_LIMIT = 80
"""Characters of client input quoted in a message."""


def echo(value: str, limit: int = ECHO_LIMIT) -> str:
    """``value`` quoted (as ``repr`` does), cut to ``limit`` characters with the total length
    said when longer: ``'abcd…' (10000 characters)``."""
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit]!r}… ({len(value)} characters)"
