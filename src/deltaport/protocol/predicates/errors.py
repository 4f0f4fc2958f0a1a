"""The error raised for predicates that cannot be parsed or evaluated."""

from __future__ import annotations


class PredicateError(ValueError):
    """A predicate hint is malformed: unknown op, wrong number of children, bad value type
    or a value that does not parse as its type."""
