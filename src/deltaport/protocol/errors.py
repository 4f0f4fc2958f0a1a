"""Protocol errors: each kind carries its HTTP status and the spec's ``errorCode``.

Messages are shown to recipients as they are, so they must never hold secrets, storage
credentials or internal details; :class:`InternalError` always answers with a fixed text.
"""

from __future__ import annotations

from typing import ClassVar

import msgspec

MAX_MESSAGE_LENGTH = 1000
"""Longer messages are cut: a message quoting input must not grow with it."""


class ErrorBody(msgspec.Struct):
    """The JSON body of every error response."""

    errorCode: str
    message: str


class SharingError(Exception):
    """Base of the errors a sharing server answers with."""

    status: ClassVar[int] = 500
    error_code: ClassVar[str] = "INTERNAL_ERROR"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def body(self) -> ErrorBody:
        message = self.message
        if len(message) > MAX_MESSAGE_LENGTH:
            message = message[:MAX_MESSAGE_LENGTH] + "…"
        return ErrorBody(self.error_code, message)


class InvalidParameterError(SharingError):
    """A parameter has a wrong value, type or combination."""

    status = 400
    error_code = "INVALID_PARAMETER_VALUE"


class MalformedRequestError(SharingError):
    """The request body is not valid JSON or does not have the expected shape."""

    status = 400
    error_code = "MALFORMED_REQUEST"


class UnsupportedOperationError(SharingError):
    """The request is valid but cannot be served (for example an unsupported format)."""

    status = 400
    error_code = "UNSUPPORTED_OPERATION"


class UnauthenticatedError(SharingError):
    """The bearer token is missing or wrong."""

    status = 401
    error_code = "UNAUTHENTICATED"


class PermissionDeniedError(SharingError):
    """The recipient is known but may not access the resource."""

    status = 403
    error_code = "PERMISSION_DENIED"


class ResourceNotFoundError(SharingError):
    """A share, schema, table, version or route that does not exist."""

    status = 404
    error_code = "RESOURCE_DOES_NOT_EXIST"


class RequestTooLargeError(SharingError):
    """The request body is larger than the server accepts (``maxRequestBodyBytes``)."""

    status = 413
    error_code = "REQUEST_TOO_LARGE"


class TimedOutError(SharingError):
    """The work asked for did not finish within its time bound (an admin diff that reads
    storage for longer than ``admin.diffTimeoutSeconds``)."""

    status = 504
    error_code = "REQUEST_TIMEOUT"


class RequestHeaderTooLargeError(SharingError):
    """The request's headers are larger than the server looks at."""

    status = 431
    error_code = "REQUEST_HEADER_TOO_LARGE"


class PathTooLongError(SharingError):
    """A segment of the request's path is longer than any a valid request has."""

    status = 414
    error_code = "REQUEST_PATH_TOO_LONG"


class ResourceExistsError(SharingError):
    """A resource of that name exists already (admin API)."""

    status = 409
    error_code = "RESOURCE_ALREADY_EXISTS"


class TooManyRequestsError(SharingError):
    """Too many failed authentications from one client address; ``retry_after`` seconds
    until it may try again (the ``Retry-After`` header)."""

    status = 429
    error_code = "TOO_MANY_REQUESTS"

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class MethodNotAllowedError(SharingError):
    status = 405
    error_code = "METHOD_NOT_ALLOWED"


class TableCorruptError(SharingError):
    """The table's Delta log cannot be read at a version (bad JSON, a missing part, a file
    outside the table): a fault of the provider's data, not of the request. The message
    names the table and version, never where the table is stored."""

    status = 500
    error_code = "TABLE_CORRUPT"


class TemporarilyUnavailableError(SharingError):
    """The server cannot answer for now (its catalog database has been unreachable for
    longer than it may serve from memory); retrying later may succeed."""

    status = 503
    error_code = "TEMPORARILY_UNAVAILABLE"


class InsufficientStorageError(SharingError):
    """A write the server could not make: the disk under its catalog database (or the
    Iceberg metadata directory) is full. Nothing of it was kept; the same request succeeds
    once the provider frees space."""

    status = 507
    error_code = "INSUFFICIENT_STORAGE"


class InternalError(SharingError):
    """Anything unexpected; the message never carries the cause."""

    status = 500
    error_code = "INTERNAL_ERROR"

    def __init__(self, message: str = "internal server error") -> None:
        super().__init__(message)


class UnsupportedAccessModeError(SharingError):
    """The table is not offered in the access mode the request needs (``/query`` on a
    ``dir``-only table, credentials for a ``url``-only one)."""

    status = 400
    error_code = "UNSUPPORTED_ACCESS_MODE"
