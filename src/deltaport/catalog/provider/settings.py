"""What the provider service applies besides what a change names: the serving side's
settings (where profiles point, how tables are read to check them, how long activation
links last, how long IP access lists may be)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from deltaport.catalog.access import SettingsFor
from deltaport.catalog.recipient_access import DEFAULT_LINK_LIFETIME, DEFAULT_MAX_ENTRIES


def _no_iceberg(endpoint: str) -> str | None:
    return None


@dataclass(frozen=True)
class ProviderSettings:
    sharing_url: str | None = None
    """Where profiles point unless the change or the recipient says otherwise; None: where
    the catalog says (a server, through ``--server``)."""
    location_settings: SettingsFor | None = None
    """The storage options and credential settings of a location (the server's
    configuration); None: no options, and credential settings are not checked."""
    reads_tables: bool = True
    """Whether a table is read before it is shared (not through ``--server``, where the
    server reads it)."""
    link_lifetime: timedelta = DEFAULT_LINK_LIFETIME
    max_ip_entries: int = DEFAULT_MAX_ENTRIES
    iceberg_for: Callable[[str], str | None] = _no_iceberg
    """Where the Iceberg catalog is for a sharing endpoint (None: not served)."""
