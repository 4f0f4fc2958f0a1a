"""A table's access modes in the configuration: checks at start, and which storage
options and credential settings apply to each of its locations.

``dir`` hands the recipient the whole directory, so it is only offered where the provider
has said the table's history is shared (``historyShared: true``, ``startVersion: 0``): a
recipient reading the log can read every version it still holds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from deltaport.protocol.credentials import ACCESS_MODES, DIR
from deltaport.storage import InvalidLocationError, parse_location
from deltaport.storage.credentials import CredentialSettings, vendor_problem

if TYPE_CHECKING:
    from deltaport.server.config import ServerConfig, TableConfig


def location_settings(
    config: ServerConfig, table: TableConfig, location: str
) -> tuple[dict[str, str], CredentialSettings]:
    """The storage options for ``location`` (matching ``storage`` prefixes, longest last,
    then the table's own) and the credential settings of the longest matching prefix that
    has them."""
    matching = sorted(
        (s for s in config.storage if location.startswith(s.prefix)), key=lambda s: len(s.prefix)
    )
    options: dict[str, str] = {}
    settings = CredentialSettings()
    for entry in matching:
        options.update(entry.options)
        if entry.credentials is not None:
            settings = entry.credentials
    options.update(table.storage_options or {})
    return options, settings


def access_problem(config: ServerConfig, table: TableConfig) -> str | None:
    """What is wrong with the table's ``accessModes`` and ``auxiliaryLocations``, as
    ``key: reason``, or None."""
    modes = table.access_modes
    if not modes:
        return "accessModes: must name at least one of 'url', 'dir'"
    for mode in modes:
        if mode not in ACCESS_MODES:
            return f"accessModes: {mode!r} is not an access mode (use 'url', 'dir' or both)"
    if len(set(modes)) != len(modes):
        return "accessModes: a mode is listed twice"
    for i, text in enumerate(table.auxiliary_locations):
        try:
            parse_location(text)
        except InvalidLocationError as exc:
            return f"auxiliaryLocations[{i}]: {exc}"
    if DIR not in modes:
        return None
    if table.partition_filter is not None:
        return (
            "accessModes: 'dir' cannot be offered on a table with a partitionFilter: the "
            "credentials would reach every partition"
        )
    if not table.shares_history or table.start_version:
        return (
            "accessModes: 'dir' gives recipients the table's whole directory, every version "
            "it holds included; set historyShared: true (and no startVersion) to offer it"
        )
    locations = [("location", table.location)] + [
        (f"auxiliaryLocations[{i}]", text) for i, text in enumerate(table.auxiliary_locations)
    ]
    for key, text in locations:
        try:
            location = parse_location(text)
        except InvalidLocationError as exc:
            return f"{key}: {exc}"
        options, settings = location_settings(config, table, text)
        problem = vendor_problem(location, options, settings)
        if problem:
            return f"{key}: {problem}"
    return None
