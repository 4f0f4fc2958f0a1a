"""The checks the SQL store makes before it writes anything (names, bounds, endpoints, a
table's fields), and how it shows a token's expiry: each refuses with a
:class:`~deltaport.catalog.rows.CatalogError` that says why."""

from __future__ import annotations

import time
from datetime import datetime, timedelta

from deltaport.catalog.access import SettingsFor, access_problem
from deltaport.catalog.limits import lifetime_problem, table_problem, text_problem
from deltaport.catalog.rows import CatalogError, TableSpec
from deltaport.protocol.names import name_problem
from deltaport.protocol.profile import ProfileError, http_url
from deltaport.storage.uri import is_relative_path


def check_table_fields(
    label: str, spec: TableSpec, settings_for: SettingsFor | None = None
) -> None:
    """A shared table's fields, without reading the table: its bounds, an absolute
    location, its access modes, checked against the server's credential settings when
    ``settings_for`` gives them (see :func:`~deltaport.catalog.access.access_problem`), and
    what recipients see of it besides its name."""
    check("comment", text_problem(spec.comment))
    spec.details.check()
    location, auxiliary = spec.location, spec.auxiliary_locations
    problem = table_problem(location, spec.start_version, spec.partition_filter, auxiliary)
    if problem:
        raise CatalogError(f"table {label} cannot be shared: {problem}")
    if is_relative_path(location):
        raise CatalogError(
            f"table {label}: the location {location!r} is a relative path; "
            "give an absolute path or a URI"
        )
    problem = access_problem(
        location,
        spec.access_modes,
        auxiliary,
        history_shared=spec.history_shared,
        start_version=spec.start_version,
        partition_filter=spec.partition_filter,
        settings_for=settings_for,
    )
    if problem:
        raise CatalogError(f"table {label} cannot be shared: {problem}")


def seconds(lifetime: timedelta | None) -> int | None:
    return None if lifetime is None else int(lifetime.total_seconds())


def check_endpoint(endpoint: str | None) -> None:
    """Refuse, before anything is written, an endpoint no profile could use."""
    if endpoint is None:
        return
    if not endpoint.isprintable() or any(c.isspace() for c in endpoint):
        raise CatalogError(f"the endpoint is not an http(s) URL: {endpoint!r}")
    try:
        http_url(endpoint, "the endpoint")  # a profile's rule: scheme, host, port
    except ProfileError as exc:
        raise CatalogError(str(exc)) from None


def check_name(name: str, what: str) -> None:
    problem = name_problem(name)
    if problem:
        raise CatalogError(f"{what} name {name!r} {problem}")


def check(what: str, problem: str | None) -> None:
    if problem:
        raise CatalogError(f"{what} {problem}")


def check_lifetime(expires_in: timedelta | None) -> None:
    if expires_in is not None:
        check("the token lifetime", lifetime_problem(expires_in.total_seconds()))


def now_ms() -> int:
    return int(time.time() * 1000)


def expiry_text(expires_at: int | None) -> str:
    """When a token ends, as local time; a stored value no date can show (written before
    lifetimes were bounded) is shown as its milliseconds since the epoch."""
    if expires_at is None:
        return "never"
    try:
        moment = datetime.fromtimestamp(expires_at / 1000).astimezone()
    except (ValueError, OverflowError, OSError):
        return f"{expires_at} ms after 1970-01-01 UTC"
    return moment.isoformat(timespec="seconds")
