"""What the catalog commands of ``deltaport`` do: each takes a :class:`SqlCatalog` and
returns the text to print. The argument parsing is in :mod:`deltaport.catalog_cli`."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from datetime import timedelta
from pathlib import Path

from deltaport.catalog.access import SettingsFor, access_problem
from deltaport.catalog.limits import MAX_DURATION_SECONDS, table_problem
from deltaport.catalog.partition_filter import PartitionFilterError, check
from deltaport.catalog.remote import RemoteCatalog
from deltaport.catalog.sql_store import CatalogError, IssuedToken, SqlCatalog, expiry_text
from deltaport.delta import open_table
from deltaport.delta.errors import DeltaError
from deltaport.protocol.credentials import URL
from deltaport.protocol.names import name_key

_DURATION = re.compile(r"^(\d{1,12})\s*([smhdw])$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_duration(text: str) -> timedelta:
    """``90d``, ``12h``, ``30m``, ``45s``, ``2w``: at most 100 years."""
    match = _DURATION.match(text.strip().lower())
    if not match:
        raise CatalogError(f"not a duration: {text[:80]!r} (use e.g. 90d, 12h, 30m)")
    seconds = int(match.group(1)) * _UNITS[match.group(2)]
    if seconds > MAX_DURATION_SECONDS:
        raise CatalogError(f"{text[:80]!r} is longer than 100 years ({MAX_DURATION_SECONDS}s)")
    return timedelta(seconds=seconds)


def split_table_name(text: str) -> tuple[str, str, str]:
    parts = text.split(".")
    if len(parts) != 3 or not all(parts):
        raise CatalogError(f"a table is named SHARE.SCHEMA.TABLE, got {text!r}")
    return parts[0], parts[1], parts[2]


def add_table(
    catalog: SqlCatalog,
    full_name: str,
    location: str,
    *,
    history_shared: bool,
    start_version: int,
    partition_filter: str | None,
    access_modes: Sequence[str] = (URL,),
    auxiliary_locations: Sequence[str] = (),
    storage_options: Mapping[str, str] | None = None,
    settings_for: SettingsFor | None = None,
) -> str:
    """Add a table after checking its access modes (with the credential settings of
    ``settings_for`` when the server's storage configuration is known), that ``location``
    holds a Delta table and that the partition filter names only its partition columns."""
    share, schema, name = split_table_name(full_name)
    problem = table_problem(location, start_version, partition_filter, auxiliary_locations)
    problem = problem or access_problem(
        location,
        access_modes,
        auxiliary_locations,
        history_shared=history_shared,
        start_version=start_version,
        partition_filter=partition_filter,
        settings_for=settings_for,
    )
    if problem:
        raise CatalogError(f"table {full_name} cannot be shared: {problem}")
    try:
        metadata = open_table(location, storage_options).snapshot().metadata
    except DeltaError as exc:
        raise CatalogError(f"{location} cannot be shared: {exc}") from None
    if partition_filter is not None:
        try:
            check(partition_filter, metadata.partition_columns)
        except PartitionFilterError as exc:
            raise CatalogError(str(exc)) from None
    catalog.add_table(
        share,
        schema,
        name,
        location,
        history_shared=history_shared,
        start_version=start_version,
        partition_filter=partition_filter,
        access_modes=access_modes,
        auxiliary_locations=auxiliary_locations,
    )
    return f"added table {share}.{schema}.{name} ({location})"


def list_shares(catalog: SqlCatalog | RemoteCatalog) -> str:
    contents = catalog.contents()
    lines = []
    for share in contents.shares:
        tables = [t for t in contents.tables if name_key(t.share) == name_key(share.name)]
        granted = sorted(
            r.name for r in contents.recipients.values() if name_key(share.name) in r.shares
        )
        lines.append(
            f"{share.name}  ({len(tables)} tables; granted to: {', '.join(granted) or 'nobody'})"
        )
        for t in tables:
            extra = []
            if t.history_shared:
                extra.append("history")
            if t.access_modes != (URL,):
                extra.append(f"access: {', '.join(t.access_modes)}")
            if t.auxiliary_locations:
                extra.append(f"auxiliary: {', '.join(t.auxiliary_locations)}")
            if t.partition_filter:
                extra.append(f"filter: {t.partition_filter}")
            note = f"  [{'; '.join(extra)}]" if extra else ""
            lines.append(f"  {t.share}.{t.schema}.{t.name} -> {t.location}{note}")
    return "\n".join(lines) or "no shares"


def list_recipients(catalog: SqlCatalog | RemoteCatalog) -> str:
    contents = catalog.contents()
    shares = {name_key(s.name): s.name for s in contents.shares}
    lines = []
    for key, recipient in sorted(contents.recipients.items()):
        tokens = [t for t in contents.tokens.values() if t.recipient_key == key]
        live = [t for t in tokens if t.revoked_at is None]
        expiry = ", ".join(expiry_text(t.expires_at) for t in live) or "none"
        granted = ", ".join(shares[s] for s in recipient.shares) or "none"
        props = ", ".join(f"{k}={v}" for k, v in sorted(recipient.properties.items()))
        lines.append(
            f"{recipient.name}: shares {granted}; tokens expiring {expiry}"
            + (f"; properties {props}" if props else "")
        )
    return "\n".join(lines) or "no recipients"


def profile_document(issued: IssuedToken, endpoint: str) -> dict[str, object]:
    """A recipient's profile (``shareCredentialsVersion`` 1) for a token just issued."""
    profile: dict[str, object] = {
        "shareCredentialsVersion": 1,
        "endpoint": endpoint,
        "bearerToken": issued.token,
    }
    if issued.expires_at is not None:
        profile["expirationTime"] = _iso_utc(issued.expires_at)
    return profile


def write_profile(issued: IssuedToken, endpoint: str, output: str | None) -> str:
    """The recipient's profile file (written to ``output``, readable by its owner only),
    or its text when no file is asked for; the token is never shown again."""
    text = json.dumps(profile_document(issued, endpoint), indent=2) + "\n"
    if output is None:
        return text + "(keep this profile: its token cannot be shown again)"
    path = Path(output)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    until = expiry_text(issued.expires_at)
    return f"wrote the profile of {issued.recipient} to {path} (token valid until {until})"


def _iso_utc(millis: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(millis / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
