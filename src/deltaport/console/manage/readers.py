"""Who can read a shared table and through which grant: the recipients granted its share
(the catalog grants shares, not tables), and, for a table with a partition filter, which
of them lack a property it names and so read none of its rows."""

from __future__ import annotations

from dataclasses import dataclass

from deltaport.catalog.partition_filter import properties_named
from deltaport.catalog.rows import RecipientRow, TableRow

READERS_SHOWN = 50
"""How many readers a share's page names for each table (it counts the rest)."""


@dataclass(frozen=True)
class Reader:
    recipient: str
    grant: str
    """The share whose grant lets the recipient read the table."""
    lacking: tuple[str, ...] = ()
    """Properties the table's partition filter names that the recipient has not got."""


def readers(table: TableRow, recipients: list[RecipientRow]) -> list[Reader]:
    """The readers of ``table`` among ``recipients`` (those granted its share)."""
    named = properties_named(table.partition_filter or "")
    return [
        Reader(r.name, table.share, tuple(p for p in named if p not in r.properties))
        for r in recipients
    ]


def lacking(named: list[str], recipients: list[RecipientRow]) -> dict[str, list[str]]:
    """Per property in ``named``: the recipients that have not got it."""
    return {p: [r.name for r in recipients if p not in r.properties] for p in named}
