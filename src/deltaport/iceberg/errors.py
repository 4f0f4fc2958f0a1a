"""Errors of the Iceberg catalog, in the REST specification's shape:
``{"error": {"message", "type", "code"}}``."""

from __future__ import annotations

from starlette.responses import JSONResponse


class IcebergError(Exception):
    """An answer other than success: ``status`` and the specification's exception ``kind``."""

    status = 400
    kind = "BadRequestException"

    def response(self) -> JSONResponse:
        body = {"error": {"message": str(self), "type": self.kind, "code": self.status}}
        return JSONResponse(body, status_code=self.status)


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


class UnsupportedOperation(IcebergError):
    status = 406
    kind = "UnsupportedOperationException"


class UnsupportedTable(IcebergError):
    """A table this catalog cannot offer to Iceberg readers (a type Iceberg cannot hold, a
    partition filter): listed nowhere, and a load names the reason."""

    status = 400
    kind = "BadRequestException"


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

    def response(self) -> JSONResponse:
        answer = super().response()
        answer.headers["retry-after"] = str(self.retry_after)
        return answer
