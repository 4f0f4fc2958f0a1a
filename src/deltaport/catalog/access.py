"""A table's access modes (``url``, ``dir``) and auxiliary locations: the one check every way
of sharing a table makes (a YAML configuration at start, the catalog commands, the admin
API), and the :class:`TableAccess` that list-tables and metadata answers show.

``dir`` hands the recipient the whole directory, so it is only offered where the provider
has said the table's history is shared (``historyShared``, no ``startVersion``): a recipient
reading the log can read every version it still holds. Nor is it offered with a partition
filter: the credentials reach every partition, and nothing could enforce the filter.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from deltaport.catalog.model import TableAccess
from deltaport.protocol.credentials import ACCESS_MODES, DIR
from deltaport.storage import InvalidLocationError, Location, parse_location
from deltaport.storage.credentials import CredentialSettings, local_problem, vendor_problem

SettingsFor = Callable[[str], tuple[dict[str, str], CredentialSettings]]
"""The storage options and credential settings that apply to a location (from a server's
``storage`` entries)."""


def access_problem(
    location: str,
    modes: Sequence[str],
    auxiliary_locations: Sequence[str],
    *,
    history_shared: bool,
    start_version: int,
    partition_filter: str | None,
    settings_for: SettingsFor | None,
) -> str | None:
    """What is wrong with a table's access modes and auxiliary locations, as ``key: reason``
    (the configuration's keys), or None.

    With ``settings_for`` the credential settings of each location are checked too; without
    (a command writing the database, not knowing the server's storage configuration) only
    what holds whatever the configuration: the server then refuses such a location's
    credentials when they are asked for."""
    if not modes:
        return "accessModes: must name at least one of 'url', 'dir'"
    for mode in modes:
        if mode not in ACCESS_MODES:
            return f"accessModes: {mode!r} is not an access mode (use 'url', 'dir' or both)"
    if len(set(modes)) != len(modes):
        return "accessModes: a mode is listed twice"
    for i, text in enumerate(auxiliary_locations):
        try:
            parse_location(text)
        except InvalidLocationError as exc:
            return f"auxiliaryLocations[{i}]: {exc}"
    if DIR not in modes:
        return None
    if partition_filter is not None:
        return (
            "accessModes: 'dir' cannot be offered on a table with a partitionFilter: the "
            "credentials would reach every partition"
        )
    if not history_shared or start_version:
        return (
            "accessModes: 'dir' gives recipients the table's whole directory, every version "
            "it holds included; set historyShared: true (and no startVersion) to offer it"
        )
    keyed = [("location", location)] + [
        (f"auxiliaryLocations[{i}]", text) for i, text in enumerate(auxiliary_locations)
    ]
    for key, text in keyed:
        try:
            parsed = parse_location(text)
        except InvalidLocationError as exc:
            return f"{key}: {exc}"
        if settings_for is None:
            problem = local_problem(parsed)
        else:
            options, settings = settings_for(text)
            problem = vendor_problem(parsed, options, settings)
        if problem:
            return f"{key}: {problem}"
    return None


def table_access(
    location: Location, text: str, modes: Sequence[str], auxiliary_locations: Sequence[str]
) -> TableAccess:
    """What a table shows of its access: its modes, its location (the text it was shared
    with; only for cloud tables) and its auxiliary locations, without trailing slashes."""
    return TableAccess(
        tuple(modes),
        None if location.kind == "local" else text.rstrip("/"),
        tuple(a.rstrip("/") for a in auxiliary_locations),
    )
