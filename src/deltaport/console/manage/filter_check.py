"""A partition filter checked as it is typed: the partition columns of the table at the
location given, whether the filter names only those, the recipient properties it names
and the recipients of the share that lack them (they would read no rows)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from deltaport.catalog.partition_filter import PartitionFilterError, check, properties_named
from deltaport.catalog.rows import RecipientRow
from deltaport.console.manage.readers import lacking
from deltaport.delta import open_table
from deltaport.delta.errors import DeltaError

OptionsFor = Callable[[str], Mapping[str, str]]


@dataclass(frozen=True)
class FilterReport:
    location_problem: str | None = None
    partition_columns: tuple[str, ...] | None = None
    """None: the location was not given or could not be read."""
    problem: str | None = None
    properties: dict[str, list[str]] = field(default_factory=dict)
    """Each property the filter names, with the recipients that lack it."""


def partition_columns(location: str, options: Mapping[str, str]) -> tuple[str, ...]:
    """The partition columns of the Delta table at ``location`` (reads storage); a
    :class:`DeltaError` when it is not a readable Delta table."""
    return tuple(open_table(location, dict(options)).snapshot().metadata.partition_columns)


def report(
    location: str, text: str, options_for: OptionsFor, recipients: list[RecipientRow]
) -> FilterReport:
    columns: tuple[str, ...] | None = None
    location_problem = None
    if location:
        try:
            columns = partition_columns(location, options_for(location))
        except (DeltaError, ValueError) as exc:
            location_problem = f"{location} cannot be shared: {exc}"
    if not text:
        return FilterReport(location_problem, columns)
    problem = None
    try:
        check(text, columns)
    except PartitionFilterError as exc:
        problem = str(exc)
    named = [] if problem else list(dict.fromkeys(properties_named(text)))
    return FilterReport(location_problem, columns, problem, lacking(named, recipients))
