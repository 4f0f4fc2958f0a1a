"""Which way to read a table: ``url`` (the server signs each file) or ``dir`` (temporary
credentials for the table's directory, and our own Delta engine reads the log).

The choice follows the protocol's compatibility table: a table that does not say
``accessModes`` is read in ``url`` mode; ``dir`` needs the table to offer it, to have a
``location`` in a cloud this client reads (S3, Azure, GCS), and the caller to allow it.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from deltaport.client.base.errors import SharingError
from deltaport.client.base.models import Table, TableAccess
from deltaport.client.remote.planning import capabilities, response_formats
from deltaport.client.remote.rest import CAPABILITIES_HEADER, RestClient, table_path
from deltaport.protocol.credentials import DIR, URL
from deltaport.storage import InvalidLocationError, parse_location

AccessMode = Literal["auto", "url", "dir"]
ACCESS_MODE_CHOICES = ("auto", URL, DIR)
_CLOUDS = ("s3", "azure", "gcs")


def _in_cloud(location: str | None) -> bool:
    if not location:
        return False
    try:
        return parse_location(location).kind in _CLOUDS
    except InvalidLocationError:
        return False


def check_mode(mode: str) -> AccessMode:
    if mode not in ACCESS_MODE_CHOICES:
        raise ValueError(
            f"access_mode must be one of {', '.join(ACCESS_MODE_CHOICES)}, got {mode!r}"
        )
    return mode  # type: ignore[return-value]


def cloud_readable(access: TableAccess) -> bool:
    """Whether every location is in a cloud this client can read with credentials."""
    return all(_in_cloud(loc) for loc in (access.location, *access.auxiliary_locations))


def choose_mode(wanted: AccessMode, access: TableAccess, name: str) -> str:
    """``url`` or ``dir`` for a table offering ``access`` when the caller allows ``dir``
    (``wanted`` is ``auto`` or ``dir``); raises when ``dir`` is insisted on but cannot be
    had, or when neither mode can be."""
    if DIR in access.modes and cloud_readable(access):
        return DIR
    if wanted == DIR or URL not in access.modes:
        why = (
            "does not offer directory access"
            if DIR not in access.modes
            else f"lives at {access.location!r}, which this client cannot read with credentials"
        )
        raise SharingError(f"table {name} cannot be read in dir mode: it {why}")
    return URL


def fetch_table_access(rest: RestClient, table: Table) -> TableAccess:
    """The access fields of the table's ``/metadata`` answer (its ``metaData`` line)."""
    answer = rest.lines(
        "GET",
        table_path(table) + "/metadata",
        headers={CAPABILITIES_HEADER: capabilities(response_formats(None))},
    )
    for line in answer.lines:
        obj = msgspec.json.decode(line)
        if isinstance(obj, dict) and isinstance(obj.get("metaData"), dict):
            return TableAccess.from_json(obj["metaData"])
    raise SharingError("the metadata answer lacks its metaData line")
