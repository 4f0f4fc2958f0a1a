"""Partition filters: a table shared with only some of its partitions, per recipient.

A filter is a SQL predicate on the table's partition columns (the syntax of the sharing
server's predicate hints) in which ``CURRENT_RECIPIENT('name')`` stands for the value of
the asking recipient's property ``name``: ``country = CURRENT_RECIPIENT('country')``. It
is bound to a recipient before use; a recipient that lacks a property the filter names gets
a filter no file passes (it sees nothing, never everything). Only partition columns may
be named, so that whether a file passes is decided exactly from its partition values.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from functools import lru_cache

import pyarrow as pa

from deltaport.delta.model import Metadata
from deltaport.protocol.predicates import (
    Expr,
    Literal,
    PredicateError,
    file_mask,
    parse_sql_predicate,
    referenced_columns,
)
from deltaport.protocol.predicates.columns import skipping_columns

_CURRENT_RECIPIENT = re.compile(r"CURRENT_RECIPIENT\s*\(\s*'((?:[^']|'')*)'\s*\)", re.IGNORECASE)
NOTHING = Literal(False, "bool")


class PartitionFilterError(ValueError):
    """A partition filter that does not parse or names a column that is not a partition."""


def properties_named(text: str) -> list[str]:
    """The recipient properties ``text`` names."""
    return [m.group(1).replace("''", "'") for m in _CURRENT_RECIPIENT.finditer(text)]


def bind(text: str, properties: Mapping[str, str]) -> Expr:
    """The filter for a recipient with ``properties`` (parsed once per filter and values:
    tables are looked up for every request)."""
    names = properties_named(text)
    if any(name not in properties for name in names):
        return NOTHING
    return _bound(text, tuple((name, properties[name]) for name in names))


@lru_cache(maxsize=4096)
def _bound(text: str, values: tuple[tuple[str, str], ...]) -> Expr:
    by_name = dict(values)

    def value(match: re.Match[str]) -> str:
        name = match.group(1).replace("''", "'")
        return "'" + by_name[name].replace("'", "''") + "'"

    try:
        return parse_sql_predicate(_CURRENT_RECIPIENT.sub(value, text))
    except PredicateError:
        return NOTHING  # a property value that breaks the filter lets nothing through


def check(text: str, partition_columns: Collection[str] | None) -> None:
    """Raise :class:`PartitionFilterError` unless ``text`` parses and names only
    ``partition_columns`` (None: only check that it parses)."""
    sample = dict.fromkeys(properties_named(text), "x")
    try:
        expr = parse_sql_predicate(_CURRENT_RECIPIENT.sub("'x'", text) if sample else text)
    except PredicateError as exc:
        raise PartitionFilterError(f"the partition filter does not parse: {exc}") from None
    if partition_columns is None:
        return
    known = {c.casefold() for c in partition_columns}
    for column in referenced_columns(expr):
        if column.name.casefold() not in known:
            listed = ", ".join(partition_columns) or "none"
            raise PartitionFilterError(
                f"the partition filter names {column.name!r}, which is not a partition column "
                f"of the table (partition columns: {listed})"
            )


def filter_files(files: pa.Table, expr: Expr, metadata: Metadata) -> pa.Table:
    """The files whose partition values pass ``expr``."""
    if files.num_rows == 0:
        return files
    if expr == NOTHING or not _on_partitions(expr, metadata.partition_columns):
        return files.slice(0, 0)
    types, physical = skipping_columns(metadata.schema_string)
    mask = file_mask(expr, files, types, metadata.partition_columns, physical)
    return files.filter(mask)


def _on_partitions(expr: Expr, partition_columns: Collection[str]) -> bool:
    """Whether ``expr`` names partition columns only: a filter on other columns could only
    be decided from stats, which may let rows through, so it lets no file through."""
    known = {c.casefold() for c in partition_columns}
    return all(c.name.casefold() in known for c in referenced_columns(expr))
