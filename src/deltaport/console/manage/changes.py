"""A console change: the form's CSRF token checked, the catalog service called in a worker
thread and one audit record kept, naming the admin token the session signed in with (never
the token), as the admin API's own records do."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request

from deltaport.admin.tokens import AdminTokens
from deltaport.catalog.database.connection import (
    Database,
    DatabaseFullError,
    DatabaseUnavailableError,
)
from deltaport.catalog.provider.service import ProviderService
from deltaport.catalog.rows import CatalogError, catalog_refusal
from deltaport.console.auth import form
from deltaport.console.sessions import Session, same_token
from deltaport.observe.audit_log import AuditLog
from deltaport.observe.audit_record import AuditRecord
from deltaport.protocol.errors import InternalError, SharingError

T = TypeVar("T")


@dataclass(frozen=True)
class Target:
    """What an audit record of a change names."""

    share: str | None = None
    table: str | None = None
    recipient: str | None = None


class ChangeFailed(Exception):
    """A change the catalog refused: ``error`` is what the API would have answered."""

    def __init__(self, error: SharingError) -> None:
        super().__init__(error.message)
        self.error = error


class Changes:
    def __init__(
        self,
        service: ProviderService,
        database: Database,
        tokens: AdminTokens,
        audit: AuditLog | None,
        refresh: Callable[[], None] | None = None,
    ) -> None:
        """``refresh`` reloads the sharing listener's live catalog of this process, so that
        a change takes effect there at once (other servers on the database see it within
        their poll interval). The pages read ``database`` a page at a time
        (:mod:`deltaport.catalog.listings.summaries`); every change goes through ``service``."""
        self.service = service
        self.database = database
        self._tokens = tokens
        self._audit = audit
        self._refresh = refresh

    async def posted(self, request: Request) -> dict[str, str] | None:
        """The form posted, or None when its CSRF token is missing or not the session's."""
        fields = await form(request)
        session: Session = request.scope["console_session"]
        return fields if same_token(fields.get("csrf"), session.csrf) else None

    async def run(
        self, request: Request, operation: str, target: Target, change: Callable[[], T]
    ) -> T:
        """``change()`` in a worker thread, audited as ``operation`` on ``target``; a refusal
        raises :class:`ChangeFailed` (after its record is kept)."""
        started = self._now()
        try:
            result = await run_in_threadpool(change)
        except (CatalogError, DatabaseUnavailableError, DatabaseFullError) as exc:
            error = _as_error(exc)
            self._record(request, operation, target, started, error.status, error.error_code)
            raise ChangeFailed(error) from None
        self._record(request, operation, target, started, 200, None)
        if self._refresh is not None:
            await run_in_threadpool(self._reload)
        return result

    def _reload(self) -> None:
        assert self._refresh is not None
        # when the database does not answer, the listener's own poll reloads it later
        with contextlib.suppress(DatabaseUnavailableError):
            self._refresh()

    def refused(
        self, request: Request, operation: str, target: Target, error: SharingError
    ) -> None:
        """Record a change refused before it reached the catalog (a form's own check)."""
        self._record(request, operation, target, self._now(), error.status, error.error_code)

    def _now(self) -> int:
        return self._audit.now_ms() if self._audit is not None else 0

    def _record(
        self,
        request: Request,
        operation: str,
        target: Target,
        started: int,
        status: int,
        error_code: str | None,
    ) -> None:
        if self._audit is None:
            return
        session: Session = request.scope["console_session"]
        share = target.share
        if share is None and target.table is not None:
            share = target.table.partition(".")[0]
        self._audit.record(
            AuditRecord(
                time_ms=started,
                operation=operation,
                status=status,
                duration_ms=self._now() - started,
                admin=self._tokens.name(session.token_hash),
                client_address=request.client.host if request.client else None,
                user_agent=request.headers.get("user-agent"),
                share=share,
                table=target.table,
                target=target.recipient,
                error_code=error_code,
            )
        )


def _as_error(exc: Exception) -> SharingError:
    """The answer the admin API gives for ``exc`` (one of those :meth:`run` catches)."""
    refusal = catalog_refusal(exc)
    return refusal if refusal is not None else InternalError()
