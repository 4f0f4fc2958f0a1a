"""Errors a recipient sees: the server's answer (status, ``errorCode``, message) or a
response the client cannot trust (truncated, inconsistent, expired credentials)."""

from __future__ import annotations

import httpx
import msgspec


class SharingError(Exception):
    """A sharing request failed. ``status`` and ``error_code`` are the server's when it
    answered with an error, ``None`` when the failure was found on the client side."""

    def __init__(
        self, message: str, *, status: int | None = None, error_code: str | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.error_code = error_code

    def __str__(self) -> str:
        prefix = " ".join(str(p) for p in (self.status, self.error_code) if p is not None)
        return f"{prefix}: {self.message}" if prefix else self.message

    @classmethod
    def from_response(cls, response: httpx.Response) -> SharingError:
        """The error a non-2xx response carries (JSON ``{errorCode, message}``, or its text)."""
        code: str | None = None
        message = ""
        try:
            body = msgspec.json.decode(response.content)
        except msgspec.DecodeError:
            body = None
        if isinstance(body, dict):
            code = body.get("errorCode") if isinstance(body.get("errorCode"), str) else None
            raw = body.get("message")
            message = raw if isinstance(raw, str) else ""
        if not message:
            message = response.text.strip()[:500] or response.reason_phrase
        return cls(message, status=response.status_code, error_code=code)


class ProfileExpiredError(SharingError):
    """The profile's bearer token has expired; ask the provider for a new profile."""


class UrlExpiredError(SharingError):
    """A pre-signed file URL was refused or is past its expiration time."""


class ResponseError(SharingError):
    """The server's response is incomplete or inconsistent (for example a stream that ended
    without the ``endStreamAction`` it announced, or one that reports an error)."""
