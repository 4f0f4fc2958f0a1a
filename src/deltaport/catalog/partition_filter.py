"""Partition filters: a table shared with only some of its partitions, per recipient.

A filter is a SQL predicate on the table's partition columns (the syntax of the sharing
server's predicate hints) in which ``CURRENT_RECIPIENT('name')`` stands for the value of
the asking recipient's property ``name``: ``country = CURRENT_RECIPIENT('country')``. It
is bound to a recipient before use: each value is put in the parsed expression as a
string literal, never into the text, so that no value can change the filter's meaning. A
recipient that lacks a property the filter names gets a filter no file passes (it sees
nothing, never everything). Only partition columns may be named, so that whether a file
passes is decided exactly from its partition values.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Collection, Mapping
from functools import lru_cache

import pyarrow as pa

from deltaport.delta.model import Metadata
from deltaport.protocol.predicates import (
    And,
    Column,
    Comparison,
    Expr,
    IsNull,
    Literal,
    Not,
    Or,
    PredicateError,
    file_mask,
    parse_sql_predicate,
    referenced_columns,
)
from deltaport.protocol.predicates.columns import skipping_columns
from deltaport.protocol.predicates.tree import Leaf

_CURRENT_RECIPIENT = re.compile(r"CURRENT_RECIPIENT\s*\(\s*'((?:[^']|'')*)'\s*\)", re.IGNORECASE)
NOTHING = Literal(False, "bool")
_NONCE = secrets.token_hex(16)
_PLACEHOLDER = re.compile(rf"CURRENT_RECIPIENT#\d+#{_NONCE}")
"""Stands for a property while the filter is parsed: a string no filter text holds (its
nonce is random per process, and a filter is parsed before any property value is seen)."""


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
    template = _template(text)
    if template is None:
        return NOTHING
    expr, placeholders = template
    by_placeholder = {p: value for p, (_, value) in zip(placeholders, values, strict=True)}
    return _substitute(expr, by_placeholder)


@lru_cache(maxsize=1024)
def _template(text: str) -> tuple[Expr, tuple[str, ...]] | None:
    try:
        return _parse_template(text)
    except PredicateError:
        return None


def _parse_template(text: str) -> tuple[Expr, tuple[str, ...]]:
    """The filter parsed with a placeholder literal for each ``CURRENT_RECIPIENT(...)``, and
    the placeholders in order. Values are put in the parsed tree, never in the text, so that
    no property value (quotes, backslashes, SQL) can change what the filter means."""
    placeholders: list[str] = []

    def placeholder(match: re.Match[str]) -> str:
        placeholders.append(f"CURRENT_RECIPIENT#{len(placeholders)}#{_NONCE}")
        return f"'{placeholders[-1]}'"

    return parse_sql_predicate(_CURRENT_RECIPIENT.sub(placeholder, text)), tuple(placeholders)


def _substitute(expr: Expr, values: Mapping[str, str]) -> Expr:
    """``expr`` with each placeholder literal replaced by its property value."""
    match expr:
        case Literal() | Column():
            return _leaf(expr, values)
        case Comparison(op=op, left=left, right=right):
            return Comparison(op, _leaf(left, values), _leaf(right, values))
        case IsNull(child=child):
            return IsNull(_leaf(child, values))
        case Not(child=child):
            return Not(_substitute(child, values))
        case And(children=children):
            return And(tuple(_substitute(c, values) for c in children))
        case Or(children=children):
            return Or(tuple(_substitute(c, values) for c in children))
    return expr


def _leaf(leaf: Leaf, values: Mapping[str, str]) -> Leaf:
    if isinstance(leaf, Literal) and isinstance(leaf.value, str) and leaf.value in values:
        return Literal(values[leaf.value], "string")
    return leaf


Condition = tuple[str, str, str | None]
"""``(column, kind, value)``: kind ``value`` (the column equals the string ``value``),
``property`` (it equals the recipient's property ``value``) or ``null`` (it is null)."""


def as_partitions(text: str) -> list[list[Condition]] | None:
    """The filter as partitions, Unity Catalog's way of writing one: conditions AND-ed within
    a partition, partitions OR-ed; None when the filter is not of that form."""
    try:
        expr, placeholders = _parse_template(text)
    except PredicateError:
        return None
    properties = dict(zip(placeholders, properties_named(text), strict=True))
    alternatives = expr.children if isinstance(expr, Or) else (expr,)
    partitions = []
    for alternative in alternatives:
        terms = alternative.children if isinstance(alternative, And) else (alternative,)
        conditions = [_condition(term, properties) for term in terms]
        if any(c is None for c in conditions):
            return None
        partitions.append([c for c in conditions if c is not None])
    return partitions


def _condition(term: Expr, properties: Mapping[str, str]) -> Condition | None:
    match term:
        case IsNull(child=Column(name=name)):
            return name, "null", None
        case Comparison(op="equal", left=Column(name=name), right=Literal(value=str() as value)):
            if value in properties:
                return name, "property", properties[value]
            return name, "value", value
    return None


def check(text: str, partition_columns: Collection[str] | None) -> None:
    """Raise :class:`PartitionFilterError` unless ``text`` parses and names only
    ``partition_columns`` (None: only check that it parses)."""
    try:
        expr, _ = _parse_template(text)
    except PredicateError as exc:
        message = _PLACEHOLDER.sub("CURRENT_RECIPIENT(...)", str(exc))
        raise PartitionFilterError(f"the partition filter does not parse: {message}") from None
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
    return files.filter(partition_mask(files, expr, metadata))


def partition_mask(files: pa.Table, expr: Expr, metadata: Metadata) -> pa.Array:
    """Which of ``files`` pass ``expr``: a boolean array, one entry per row."""
    if files.num_rows == 0:
        return pa.array([], pa.bool_())
    if expr == NOTHING or not _on_partitions(expr, metadata.partition_columns):
        return pa.repeat(pa.scalar(False), files.num_rows)
    types, physical = skipping_columns(metadata.schema_string)
    return file_mask(expr, files, types, metadata.partition_columns, physical)


def _on_partitions(expr: Expr, partition_columns: Collection[str]) -> bool:
    """Whether ``expr`` names partition columns only: a filter on other columns could only
    be decided from stats, which may let rows through, so it lets no file through."""
    known = {c.casefold() for c in partition_columns}
    return all(c.name.casefold() in known for c in referenced_columns(expr))
