"""The one typed refusal of a shared-table question: a reason kind and a message for the
recipient (names and versions, never a storage location). No status, no error shape:
each surface maps the kind to its own at its edge."""

from __future__ import annotations

from enum import StrEnum


class RefusalKind(StrEnum):
    NOT_FOUND = "not-found"
    """No such share, schema or table, or one not granted: the two are never told apart."""
    INVALID_ASK = "invalid-ask"
    """The question itself is malformed: version and timestamp both, a negative version, a
    timestamp that does not parse."""
    HISTORY_NOT_SHARED = "history-not-shared"
    """A version, timestamp or range asked of a table that shares only its latest version."""
    BEFORE_START_VERSION = "before-start-version"
    """A version before the table's ``startVersion``, or a latest version that has not
    reached it yet."""
    VERSION_UNAVAILABLE = "version-unavailable"
    """A version or timestamp the log does not hold, or a range that is not one."""
    UNSUPPORTED_TABLE = "unsupported-table"
    """A table whose features this server cannot share."""


class TableRefusal(Exception):
    """Why a shared table is not answered as asked."""

    def __init__(self, kind: RefusalKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
