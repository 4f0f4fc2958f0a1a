"""The sharing listener's audit hook: one record a request, made when its answer is ready
(or, for a streamed answer, once the stream ended, with the files and bytes it carried).

Only names, versions, counts and codes are taken from the request and the answer: never
the ``Authorization`` header, a body, a URL or its query string, nor a path parameter other
than a share, schema or table name (an activation link's path is its secret).

A table answer listing files hands its facts (version, range end, files) to the record in
``request.state.answered_files`` (:class:`AnsweredFiles`, from the table service's typed
result); the record's ``bytes`` are the answer's, counted as it streams.

The routes a recipient's bearer token opens, on the Delta Sharing API and on the Iceberg
catalog alike, are wrapped by :class:`RecipientGuard`. The routes that take no bearer
token (the OAuth token endpoint, activation links) are audited by :func:`public_routes`;
their handlers name the recipient they served, once they know it, in
``request.state.recipient``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from deltaport.catalog.model import Recipient
from deltaport.observe.audit_log import AuditLog
from deltaport.observe.audit_operations import operation_of
from deltaport.observe.audit_record import AnsweredFiles, AuditRecord
from deltaport.protocol.echo import echo
from deltaport.server.answers.client_gone import ClientGone
from deltaport.server.limits.sharing_limits import SharingLimits
from deltaport.server.sources.catalog_source import CatalogSource
from deltaport.web.client_address import client_host

log = logging.getLogger(__name__)

VERSION_HEADER = "delta-table-version"


class _Error(msgspec.Struct):
    errorCode: str | None = None


_error = msgspec.json.Decoder(_Error)
Endpoint = Callable[[Request], Awaitable[Response]]


class SharingAudit:
    def __init__(self, log: AuditLog) -> None:
        self._log = log

    def start(self) -> int:
        return self._log.now_ms()

    async def answered(
        self,
        request: Request,
        operation: str,
        started_ms: int,
        recipient: str | None,
        response: Response,
        error_code: str | None,
    ) -> Response:
        """``response``, once its record is kept (a stream's when the stream ends)."""
        status = response.status_code
        record = _record(request, operation, started_ms, recipient, status, error_code)
        answered: AnsweredFiles | None = getattr(request.state, "answered_files", None)
        if status < 400:
            _versions_of(response, record, answered)
        if isinstance(response, StreamingResponse) and status == 200:
            files = answered.files if answered is not None else 0
            response.body_iterator = self._counted(response.body_iterator, record, files)
            return response
        record.duration_ms = self._log.now_ms() - started_ms
        self._log.record(record)
        return response

    def failed(
        self, request: Request, operation: str, started_ms: int, recipient: str | None
    ) -> None:
        """A request that ended in an unexpected error (answered 500 by the app)."""
        record = _record(request, operation, started_ms, recipient, 500, "INTERNAL_ERROR")
        record.duration_ms = self._log.now_ms() - started_ms
        self._log.record(record)

    def public(self, handler: Endpoint, operation: str) -> Endpoint:
        """``handler`` (a route without a bearer token), each request recorded."""

        async def endpoint(request: Request) -> Response:
            started = self.start()
            try:
                response = await handler(request)
            except Exception:
                self.failed(request, operation, started, _served(request))
                raise
            code = _error_code(response) if response.status_code >= 400 else None
            return await self.answered(
                request, operation, started, _served(request), response, code
            )

        return endpoint

    async def _counted(
        self, body: AsyncIterable[Any], record: AuditRecord, files: int
    ) -> AsyncIterator[Any]:
        size = 0
        try:
            async for chunk in body:
                size += len(chunk)
                yield chunk
        finally:
            record.files, record.bytes = files, size
            record.duration_ms = self._log.now_ms() - record.time_ms
            self._log.record(record)


Handler = Callable[[Request, Recipient], Awaitable[Response]]
Refusal = Callable[[Exception, Request], "tuple[Response, str] | None"]
"""An API's answer to what a handler (or the guard) raised, with the error code its audit
record keeps; None for an exception that is no refusal (it propagates: a 500)."""


class RecipientGuard:
    """Wraps handlers taking the recipient into endpoints, one audited operation each: who
    asks (the listener's limits, then the recipient's IP access list), then the handler.
    Each API answers a refusal in its own shape, through its ``refusal``."""

    def __init__(
        self,
        source: CatalogSource,
        limits: SharingLimits,
        audit: SharingAudit | None,
        refusal: Refusal,
    ) -> None:
        self._source = source
        self._limits = limits
        self._audit = audit
        self._refusal = refusal

    def __call__(self, handler: Handler) -> Endpoint:
        audit = self._audit
        operation = operation_of(handler)

        async def endpoint(request: Request) -> Response:
            started, name, code = audit.start() if audit else 0, None, None
            try:
                recipient = self._limits.authenticate(self._source, request)
                name = recipient.name
                recipient.ip_access.admit(client_host(request.scope))
                response = await handler(request, recipient)
            except ClientGone:
                path = echo(request.url.path)
                log.info("%s %s: the client left before its answer was ready", request.method, path)
                response = Response(status_code=499)
            except Exception as exc:
                refused = self._refusal(exc, request)
                if refused is None:
                    if audit:
                        audit.failed(request, operation, started, name)
                    raise
                response, code = refused
            if audit is None:
                return response
            return await audit.answered(request, operation, started, name, response, code)

        return endpoint


def public_routes(routes: Sequence[BaseRoute], audit: SharingAudit | None) -> list[Route]:
    """``routes`` (without a bearer token), each request recorded in ``audit``; a route
    whose handler has no operation stops the app from being built, audit or not."""
    audited = []
    for route in routes:
        if not isinstance(route, Route):
            raise TypeError(f"not a route of one endpoint: {route!r}")
        operation = operation_of(route.endpoint)
        endpoint = route.endpoint if audit is None else audit.public(route.endpoint, operation)
        audited.append(Route(route.path, endpoint, methods=sorted(route.methods or ())))
    return audited


def _served(request: Request) -> str | None:
    return getattr(request.state, "recipient", None)


def _error_code(response: Response) -> str | None:
    try:
        return _error.decode(response.body).errorCode
    except msgspec.DecodeError:
        return None


def _record(
    request: Request,
    operation: str,
    started_ms: int,
    recipient: str | None,
    status: int,
    error_code: str | None,
) -> AuditRecord:
    p = request.path_params
    return AuditRecord(
        time_ms=started_ms,
        operation=operation,
        status=status,
        duration_ms=0,
        recipient=recipient,
        client_address=request.client.host if request.client else None,
        user_agent=request.headers.get("user-agent"),
        share=p.get("share"),
        table=f"{p['share']}.{p['schema']}.{p['table']}" if "table" in p else None,
        error_code=error_code,
    )


def _versions_of(response: Response, record: AuditRecord, answered: AnsweredFiles | None) -> None:
    """The version the answer is at (its header), or the version, or the start and asked end
    of the range, a table answer listing files carries."""
    header = response.headers.get(VERSION_HEADER)
    if header is not None and header.isdigit():
        record.version = int(header)
    if answered is not None:
        record.version, record.end_version = answered.version, answered.end_version
