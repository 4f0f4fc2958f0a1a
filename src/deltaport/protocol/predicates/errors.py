"""The errors raised for predicates that cannot be parsed or evaluated."""

from __future__ import annotations


class PredicateError(ValueError):
    """A predicate hint is malformed: unknown op, wrong number of children, bad value type
    or a value that does not parse as its type."""


class PredicateTooComplexError(PredicateError):
    """A predicate is nested deeper, or is longer, than the limit its parser was given.

    Unlike other malformed hints, which a server may skip, a server answers this one with
    an error: a hint built to exhaust it is not one to quietly ignore."""
