"""Protocol errors: each kind carries its HTTP status and the spec's ``errorCode``.

Messages are shown to recipients as they are, so they must never hold secrets, storage
credentials or internal details; :class:`InternalError` always answers with a fixed text.
"""

from __future__ import annotations

from typing import ClassVar

import msgspec


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
        return ErrorBody(self.error_code, self.message)


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


class MethodNotAllowedError(SharingError):
    status = 405
    error_code = "METHOD_NOT_ALLOWED"


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
