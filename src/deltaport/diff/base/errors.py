"""Errors of the table differs; each carries a one-line message for end users."""

from __future__ import annotations


class DiffError(Exception):
    """Base class: the two tables cannot be diffed as asked."""


class UnknownTableFormatError(DiffError):
    """No registered differ recognises the table format at either location."""


class TablesNotFoundError(DiffError):
    """Neither location holds a table."""


class InvalidBaseVersionError(DiffError, ValueError):
    """The asked base version lies outside one of the tables' histories."""


class InvalidPageTokenError(DiffError, ValueError):
    """The page token is malformed, was altered, or belongs to another diff."""
