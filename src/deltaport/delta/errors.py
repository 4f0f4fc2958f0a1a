"""Errors of the Delta log engine; every one carries a one-line message for end users."""

from __future__ import annotations


class DeltaError(Exception):
    """Base class: the table cannot be read as asked."""


class TableNotFoundError(DeltaError):
    """The location holds no Delta table (no ``_delta_log`` or no commits in it)."""


class LogCorruptError(DeltaError):
    """The log is inconsistent: missing commits or checkpoint parts, bad JSON, no metadata.

    ``version`` is the version whose log files are at fault, when known."""

    def __init__(self, message: str, version: int | None = None) -> None:
        super().__init__(message)
        self.version = version


class VersionNotFoundError(DeltaError):
    """The asked version is outside the range the log can reconstruct."""


class TimestampOutOfRangeError(DeltaError):
    """No version of the table matches the asked timestamp."""


class UnsupportedFeatureError(DeltaError):
    """The table needs a reader protocol version or reader feature deltaport cannot honour."""


class CdfNotEnabledError(DeltaError):
    """Change data was asked for a version where the change data feed was off."""
