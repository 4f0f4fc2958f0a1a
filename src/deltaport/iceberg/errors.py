"""Errors of the Iceberg catalog. :class:`IcebergError` and its kinds are the REST
specification's error model (an HTTP status and the specification's exception type), which
the REST room answers as :class:`~deltaport.iceberg.model.catalog.IcebergErrorResponse`;
:class:`UnsupportedTable` is the conversion's own refusal, without HTTP, which the REST room
maps to that model at its edge."""

from __future__ import annotations


class UnsupportedTable(Exception):
    """A table this catalog cannot offer to Iceberg readers (a type Iceberg cannot hold, a
    partition change): listed nowhere, and a load names the reason."""


class IcebergError(Exception):
    """An answer other than success: ``status`` and the specification's exception ``kind``."""

    status = 400
    kind = "BadRequestException"


class BadRequest(IcebergError):
    pass


class NotAuthorized(IcebergError):
    status = 401
    kind = "NotAuthorizedException"


class Forbidden(IcebergError):
    status = 403
    kind = "ForbiddenException"


class NoSuchNamespace(IcebergError):
    status = 404
    kind = "NoSuchNamespaceException"


class NoSuchTable(IcebergError):
    status = 404
    kind = "NoSuchTableException"


class NoSuchResource(IcebergError):
    status = 404
    kind = "NoSuchResourceException"


class UnsupportedOperation(IcebergError):
    status = 406
    kind = "UnsupportedOperationException"


class InternalServerError(IcebergError):
    """What an unexpected failure answers (its cause in the server's log, not the body)."""

    status = 500
    kind = "InternalServerError"


class ServiceUnavailable(IcebergError):
    status = 503
    kind = "ServiceUnavailableException"


class TooManyRequests(IcebergError):
    """Over the recipient's rate, or too many failed tokens from the address (the sharing
    listener's limits, shared with its Delta Sharing API)."""

    status = 429
    kind = "TooManyRequestsException"

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after
