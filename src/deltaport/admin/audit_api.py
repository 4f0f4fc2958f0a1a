"""The audit log on the admin listener: ``GET /api/audit`` (filtered, paged newest first),
and the hook that keeps one record for each request to the catalog routes (deltaport's and
the provider API in Unity Catalog's shape, and the audit log itself), naming the admin
token that made it, never the token. The operations are
:data:`deltaport.observe.audit_operations.OPERATIONS`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import msgspec
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from deltaport.admin.openapi.audit import AuditEntry, AuditPage
from deltaport.admin.tokens import AdminTokens
from deltaport.catalog.database.connection import Database, DatabaseUnavailableError
from deltaport.observe import audit_record as ops
from deltaport.observe.audit_filters import FIELDS, audit_filter, refusal
from deltaport.observe.audit_log import AuditLog
from deltaport.observe.audit_operations import operation_of
from deltaport.observe.audit_record import AuditRecord
from deltaport.observe.audit_store import read_page
from deltaport.protocol.errors import InvalidParameterError, TemporarilyUnavailableError
from deltaport.protocol.params import int_param

Handler = Callable[[Request], Awaitable[Response]]
Guard = Callable[[Handler], Handler]
JSON = "application/json; charset=utf-8"
T = TypeVar("T", bound=msgspec.Struct)


class _Principal(msgspec.Struct):
    principal: str | None = None


class _SharedAs(msgspec.Struct):
    shared_as: str | None = None


class _Update(msgspec.Struct):
    data_object: _SharedAs = msgspec.field(default_factory=_SharedAs)


class _Named(msgspec.Struct):
    """The names a request body may hold (nothing else of it is kept): deltaport's
    ``name`` and ``recipient``, Unity Catalog's ``changes[].principal`` and
    ``updates[].data_object.shared_as``."""

    name: str | None = None
    recipient: str | None = None
    changes: list[_Principal] = msgspec.field(default_factory=list)
    updates: list[_Update] = msgspec.field(default_factory=list)

    def only_principal(self) -> str | None:
        """The recipient a permissions change concerns, when it concerns one."""
        names = {c.principal for c in self.changes}
        return names.pop() if len(names) == 1 else None

    def only_table(self, share: str) -> str | None:
        """``share.schema.table`` of a share update that names one table."""
        names = {u.data_object.shared_as for u in self.updates}
        name = names.pop() if len(names) == 1 else None
        return f"{share}.{name}" if name else None


class _Error(msgspec.Struct):
    errorCode: str | None = None
    error_code: str | None = None
    """Unity Catalog's spelling, in the provider API's answers."""


class AdminAudit:
    def __init__(self, log: AuditLog | None, tokens: AdminTokens) -> None:
        self._log = log
        self._tokens = tokens

    def audited(self, guard: Guard) -> Guard:
        """``guard``, keeping one record for each request to the routes it guards (none
        without a log); a handler with no operation stops the app from being built."""

        def audited_guard(handler: Handler) -> Handler:
            operation = operation_of(handler)
            guarded = guard(handler)
            log = self._log
            if log is None:
                return guarded

            async def endpoint(request: Request) -> Response:
                started = log.now_ms()
                response = await guarded(request)
                log.record(await self._record(log, request, operation, started, response))
                return response

            return endpoint

        return audited_guard

    async def _record(
        self, log: AuditLog, request: Request, operation: str, started: int, response: Response
    ) -> AuditRecord:
        hashed = self._tokens.bearer(request.headers.get("authorization"))
        body = _decoded(await request.body(), _Named) if request.method != "GET" else _Named()
        error = _decoded(response.body, _Error) if response.status_code >= 400 else _Error()
        path = request.path_params
        share = path.get("share") or (body.name if operation == ops.CREATE_SHARE else None)
        table = path.get("table")
        if operation == ops.UPDATE_SHARE and table is None:
            table = body.only_table(share) if share is not None else body.name
        if share is None and table is not None:
            share = table.partition(".")[0]
        target = path.get("recipient") or body.recipient or body.only_principal()
        if operation == ops.CREATE_RECIPIENT:
            target = body.name
        return AuditRecord(
            time_ms=started,
            operation=operation,
            status=response.status_code,
            duration_ms=log.now_ms() - started,
            admin=self._tokens.name(hashed) if hashed is not None else None,
            client_address=request.client.host if request.client else None,
            user_agent=request.headers.get("user-agent"),
            share=share,
            table=table,
            target=target,
            error_code=error.errorCode or error.error_code,
        )


def _decoded(raw: bytes | memoryview, kind: type[T]) -> T:
    try:
        return msgspec.json.decode(raw or b"{}", type=kind)
    except (msgspec.DecodeError, RecursionError):
        return kind()


class AuditApi:
    """``GET /api/audit`` over the catalog database's audit records."""

    def __init__(self, database: Database) -> None:
        self._database = database

    def routes(self, guard: Guard) -> list[BaseRoute]:
        return [Route("/api/audit", guard(self.audit_page), methods=["GET"])]

    async def audit_page(self, request: Request) -> Response:
        params = request.query_params
        where, errors = audit_filter({name: params.get(name) or "" for name in FIELDS})
        if where is None:
            raise InvalidParameterError(refusal(errors))
        try:
            limit = int_param(params.get("limit"), "limit")
            token = params.get("page_token") or None
            page = await run_in_threadpool(read_page, self._database, where, limit, token)
        except DatabaseUnavailableError:
            raise TemporarilyUnavailableError(
                "the catalog database cannot be reached at the moment; retry later"
            ) from None
        except ValueError as exc:
            raise InvalidParameterError(str(exc)) from None
        answer = AuditPage([AuditEntry.of(r) for r in page.records], page.next_page_token)
        return Response(msgspec.json.encode(answer), media_type=JSON)
