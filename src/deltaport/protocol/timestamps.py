"""The timestamps of the protocol's parameters (``timestamp``, ``startingTimestamp``,
``endingTimestamp``): ISO 8601, with an offset, ``Z``, or none meaning UTC. One parser for
the server, the client reading a table itself, and the console, so they agree."""

from __future__ import annotations

from datetime import UTC, datetime

from deltaport.protocol.echo import echo


def parse_timestamp(text: str) -> datetime:
    """``text`` as an aware datetime; ``ValueError`` naming it (cut short) otherwise."""
    try:
        value = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(
            f"timestamp {echo(text)} is not in ISO 8601 format (e.g. 2023-01-31T08:00:00Z)"
        ) from None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
