"""The sharing rules of one table: what may be asked of it (history, ``startVersion``), which
versions it serves, which of its files a recipient sees (the bound partition filter).

Each rule is a method of :class:`SharingRules`, and the resolver calls each once per
question; a test hands the resolver a subclass that counts the calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import pyarrow as pa

from deltaport.catalog.model import SharedTable
from deltaport.catalog.partition_filter import partition_mask
from deltaport.delta.model import Metadata
from deltaport.protocol.timestamps import parse_timestamp
from deltaport.sharing.refusals import RefusalKind, TableRefusal


@dataclass(frozen=True)
class VersionAsk:
    """What a read asks for: a ``version``, a ``timestamp`` (protocol text), or neither (the
    latest version)."""

    version: int | None = None
    timestamp: str | None = None

    @property
    def travelled(self) -> bool:
        return self.version is not None or self.timestamp is not None


def table_name(table: SharedTable) -> str:
    return f"{table.share}.{table.schema}.{table.name}"


def parsed_timestamp(text: str) -> datetime:
    """A timestamp parameter (see :mod:`deltaport.protocol.timestamps`)."""
    try:
        return parse_timestamp(text)
    except ValueError as exc:
        raise TableRefusal(RefusalKind.INVALID_ASK, str(exc)) from None


class SharingRules:
    def check_ask(self, table: SharedTable, ask: VersionAsk) -> datetime | None:
        """Refuse what ``table`` does not share before any log is read; the asked
        timestamp, parsed."""
        if ask.version is not None and ask.timestamp is not None:
            raise TableRefusal(RefusalKind.INVALID_ASK, "version and timestamp cannot both be set")
        if ask.travelled and not table.history_shared:
            raise TableRefusal(
                RefusalKind.HISTORY_NOT_SHARED,
                "reading the table by version or timestamp is not supported because history "
                f"sharing is not enabled on table {table_name(table)}",
            )
        if ask.version is not None:
            if ask.version < 0:
                raise TableRefusal(RefusalKind.INVALID_ASK, "version cannot be negative")
            if ask.version < table.start_version:
                raise TableRefusal(
                    RefusalKind.BEFORE_START_VERSION,
                    f"data of this table is shared from version {table.start_version}",
                )
        return parsed_timestamp(ask.timestamp) if ask.timestamp is not None else None

    def check_version(self, table: SharedTable, version: int, timestamp: str | None) -> None:
        """Refuse a resolved ``version`` (the latest, or a timestamp's) before the table's
        ``startVersion``."""
        if version >= table.start_version:
            return
        at = "" if timestamp is None else f" {timestamp}"
        raise TableRefusal(
            RefusalKind.BEFORE_START_VERSION,
            f"data of this table is shared from version {table.start_version}; "
            f"the timestamp{at} corresponds to version {version}",
        )

    def check_range(self, table: SharedTable, start: int, end: int, latest: int) -> None:
        """Refuse a version range ``start..end`` that the table does not share."""
        if start < table.start_version:
            raise TableRefusal(
                RefusalKind.BEFORE_START_VERSION,
                f"data of this table is shared from version {table.start_version}; "
                f"the asked range starts at version {start}",
            )
        if start > latest:
            raise TableRefusal(
                RefusalKind.VERSION_UNAVAILABLE,
                f"the starting version {start} is after the latest version {latest}",
            )
        if end < start:
            raise TableRefusal(
                RefusalKind.VERSION_UNAVAILABLE,
                f"the ending version {end} is before the starting version {start}",
            )

    def require_history(self, table: SharedTable) -> None:
        """Refuse a version range or change data of a table without shared history."""
        if not table.history_shared:
            raise TableRefusal(
                RefusalKind.HISTORY_NOT_SHARED,
                f"table {table_name(table)} does not share its history (historyShared is "
                "off), so version ranges and its change data feed cannot be read",
            )

    def served_versions(
        self, table: SharedTable, latest: int, earliest: int | None, every_version: bool
    ) -> range:
        """The versions a reader of every version is offered: the latest alone without
        history (or without ``every_version``); with history each from ``startVersion`` on
        that the log still holds (``earliest``: its earliest reconstructable version)."""
        self.check_version(table, latest, None)
        if not (table.history_shared and every_version):
            return range(latest, latest + 1)
        first = table.start_version
        if first < latest:
            first = max(first, latest if earliest is None else earliest)
        return range(first, latest + 1)

    def visible(self, table: SharedTable, files: pa.Table, metadata: Metadata) -> pa.Array | None:
        """Which of ``files`` the asking recipient sees (its bound partition filter); None:
        every one."""
        if table.row_filter is None:
            return None
        return partition_mask(files, table.row_filter, metadata)
