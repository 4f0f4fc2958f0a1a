"""Which storage options and credential settings of the server's configuration apply to
a location of a table (for vending its ``dir`` credentials and checking that they can be).
The checks of access modes themselves are :mod:`deltaport.catalog.access`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from deltaport.storage.credentials import CredentialSettings

if TYPE_CHECKING:
    from deltaport.server.config import ServerConfig


def location_settings(
    config: ServerConfig, table_options: Mapping[str, str] | None, location: str
) -> tuple[dict[str, str], CredentialSettings]:
    """The storage options for ``location`` (matching ``storage`` prefixes, longest last,
    then the table's own ``table_options``) and the credential settings of the longest
    matching prefix that has them."""
    matching = sorted(
        (s for s in config.storage if location.startswith(s.prefix)), key=lambda s: len(s.prefix)
    )
    options: dict[str, str] = {}
    settings = CredentialSettings()
    for entry in matching:
        options.update(entry.options)
        if entry.credentials is not None:
            settings = entry.credentials
    options.update(table_options or {})
    return options, settings
