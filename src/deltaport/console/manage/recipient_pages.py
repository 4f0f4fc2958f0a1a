"""Recipients: listed and created (bearer token or OAuth client, a profile or an
activation link, shown once), and a recipient's page: its properties, IP access list,
credentials (rotated with a grace period, revoked), grants (given and taken back here),
last use and latest audit records; deleting it asks first."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from deltaport.catalog.database.connection import DatabaseUnavailableError
from deltaport.catalog.listings import summaries
from deltaport.catalog.listings.summaries import RecipientView
from deltaport.catalog.recipient_access import ActivationLink
from deltaport.catalog.rows import IssuedToken, RecipientChange, RecipientSpec, RotationSpec
from deltaport.catalog.tokens import AUTHENTICATION_TYPES, TOKEN
from deltaport.config.model import ServerConfig
from deltaport.console.manage import forms
from deltaport.console.manage.changes import ChangeFailed, Changes, Target
from deltaport.console.manage.confirm import confirm, confirmed, q, refused
from deltaport.console.manage.issued import issued
from deltaport.console.render import page
from deltaport.observe import audit_record as ops
from deltaport.observe.audit_record import AuditRecord
from deltaport.observe.audit_store import AuditFilter, read_page
from deltaport.protocol.errors import ResourceNotFoundError
from deltaport.protocol.params import int_param

PAGE_SIZE = 100
TRAIL = 10
"""How many audit records a recipient's page shows (the audit page has the rest)."""
GRANTABLE_SHOWN = 1000
"""How many shares the grant field offers to complete (any share name may be typed)."""
BASE = "/console/recipients"
DEFAULT_GRACE = "1h"
STALE_ROTATION = (
    "the credentials changed since this page was shown (was the rotation sent twice?); "
    "nothing was rotated: check them below and rotate again if you mean to"
)


class RecipientPages:
    def __init__(self, changes: Changes, config: ServerConfig) -> None:
        self._changes = changes
        self._service = changes.service
        self._database = changes.database
        self._config = config

    async def _recipient(self, name: str) -> RecipientView:
        found = await run_in_threadpool(summaries.recipient_view, self._database, name)
        if found is None:
            raise ResourceNotFoundError(f"recipient {name[:300]!r} does not exist")
        return found

    # -- the list and creating -----------------------------------------------------------
    async def listing(
        self, request: Request, errors: forms.FormErrors | None = None, given: Any = None
    ) -> Response:
        offset = max(0, int_param(request.query_params.get("offset"), "offset") or 0)
        now = int(time.time() * 1000)
        found = await run_in_threadpool(
            summaries.recipient_page, self._database, offset, PAGE_SIZE, now
        )
        return page(
            request,
            "manage/recipients.html",
            status=400 if errors else 200,
            rows=found.rows,
            total=found.total,
            offset=offset,
            page_size=PAGE_SIZE,
            kinds=AUTHENTICATION_TYPES,
            errors=errors or {},
            given=given or {"authentication_type": TOKEN},
        )

    async def create(self, request: Request) -> Response:
        fields = await self._changes.posted(request)
        if fields is None:
            return refused(request)
        errors = forms.FormErrors()
        name = forms.text(fields, "name")
        kind = fields.get("authentication_type", TOKEN)
        errors.check("authentication_type", None if kind in AUTHENTICATION_TYPES else "unknown")
        properties = forms.properties(fields.get("properties", ""), errors)
        entries = forms.ip_entries(
            fields.get("ip_access_list", ""),
            self._config.max_ip_access_list_entries,
            errors,
            "ip_access_list",
        )
        lifetime = forms.duration(forms.text(fields, "expires_in"), errors, "expires_in")
        target = Target(recipient=name)
        if errors:
            self._changes.refused(request, ops.CREATE_RECIPIENT, target, forms.invalid(errors))
            return await self.listing(request, errors, fields)
        try:
            made = await self._changes.run(
                request,
                ops.CREATE_RECIPIENT,
                target,
                self._creation(
                    name,
                    properties,
                    lifetime,
                    entries,
                    kind,
                    activation=forms.checked(fields, "activation"),
                ),
            )
        except ChangeFailed as exc:
            return await self.listing(request, forms.FormErrors(name=exc.error.message), fields)
        shown = issued(self._service, made)
        return page(request, "manage/issued.html", issued=shown, created=True)

    # -- one recipient -------------------------------------------------------------------
    async def show(
        self, request: Request, errors: forms.FormErrors | None = None, given: Any = None
    ) -> Response:
        found = await self._recipient(request.path_params["recipient"])
        recipient = found.recipient
        grantable = await run_in_threadpool(
            summaries.grantable, self._database, recipient.name, GRANTABLE_SHOWN
        )
        trail, trail_problem = await run_in_threadpool(self._trail, recipient.name)
        return page(
            request,
            "manage/recipient.html",
            status=400 if errors else 200,
            recipient=recipient,
            granted=found.granted,
            grantable=grantable,
            credentials=found.credentials,
            trail=trail,
            trail_problem=trail_problem,
            errors=errors or {},
            given=given
            or {
                "properties": "\n".join(
                    f"{k}={v}" for k, v in sorted(recipient.properties.items())
                ),
                "ip_access_list": "\n".join(recipient.ip_access_list),
                "grace": DEFAULT_GRACE,
            },
        )

    def _trail(self, name: str) -> tuple[list[AuditRecord], str | None]:
        """The recipient's newest audit records (its own requests), or why they are not shown."""
        try:
            found = read_page(self._database, AuditFilter(recipient=name), TRAIL)
        except DatabaseUnavailableError:
            return [], "the audit records cannot be read at the moment"
        return found.records, None

    async def set_properties(self, request: Request) -> Response:
        name = request.path_params["recipient"]
        service = self._service

        def change(fields: dict[str, str], errors: forms.FormErrors) -> Any:
            found = forms.properties(fields.get("properties", ""), errors)
            return lambda: service.update_recipient(name, RecipientChange(properties=found))

        return await self._edit(request, ops.UPDATE_RECIPIENT, "properties", change)

    async def set_ip_access_list(self, request: Request) -> Response:
        name = request.path_params["recipient"]

        def change(fields: dict[str, str], errors: forms.FormErrors) -> Any:
            entries = forms.ip_entries(
                fields.get("ip_access_list", ""),
                self._config.max_ip_access_list_entries,
                errors,
                "ip_access_list",
            )
            return lambda: self._service.set_ip_access_list(name, entries)

        return await self._edit(request, ops.UPDATE_RECIPIENT, "ip_access_list", change)

    async def rotate(self, request: Request) -> Response:
        fields = await self._changes.posted(request)
        if fields is None:
            return refused(request)
        name = request.path_params["recipient"]
        errors = forms.FormErrors()
        grace = forms.duration(forms.text(fields, "grace") or "0s", errors, "grace")
        if fields.get("seen") != str(len((await self._recipient(name)).credentials)):
            # the form of an older page, or one sent again by reloading the new profile's page
            errors.check("grace", STALE_ROTATION)
        target = Target(recipient=name)
        if errors or grace is None:
            self._changes.refused(
                request, ops.ROTATE_RECIPIENT_TOKEN, target, forms.invalid(errors)
            )
            return await self.show(request, errors, fields)
        try:
            made = await self._changes.run(
                request,
                ops.ROTATE_RECIPIENT_TOKEN,
                target,
                lambda: self._service.rotate(name, RotationSpec(grace)),
            )
        except ChangeFailed as exc:
            return await self.show(request, forms.FormErrors(grace=exc.error.message), fields)
        return page(
            request, "manage/issued.html", issued=issued(self._service, made), created=False
        )

    async def grant(self, request: Request) -> Response:
        name = request.path_params["recipient"]

        def change(fields: dict[str, str], errors: forms.FormErrors) -> Any:
            share = forms.text(fields, "share")
            errors.check("share", None if share else "choose a share")
            return lambda: self._service.grant(share, name)

        return await self._edit(request, ops.UPDATE_PERMISSIONS, "share", change)

    # -- destructive changes, confirmed first ---------------------------------------------
    async def confirm_revoke(self, request: Request) -> Response:
        name = (await self._recipient(request.path_params["recipient"])).recipient.name
        return confirm(
            request,
            f"Revoke every credential of {name}?",
            "Its tokens (and OAuth client) stop working now, with no grace period. The "
            "recipient stays, with its grants: rotate to give it a new credential.",
            f"{BASE}/{q(name)}/revoke",
            f"{BASE}/{q(name)}",
            "Revoke",
        )

    async def revoke(self, request: Request) -> Response:
        name = request.path_params["recipient"]
        return await confirmed(
            self._changes,
            request,
            ops.REVOKE_RECIPIENT_TOKENS,
            Target(recipient=name),
            lambda: self._service.revoke(name),
            f"{BASE}/{q(name)}",
        )

    async def confirm_delete(self, request: Request) -> Response:
        name = (await self._recipient(request.path_params["recipient"])).recipient.name
        return confirm(
            request,
            f"Delete recipient {name}?",
            "Its credentials, grants and properties are removed; its profile stops working "
            "now. Its audit records stay.",
            f"{BASE}/{q(name)}/delete",
            f"{BASE}/{q(name)}",
            "Delete the recipient",
        )

    async def delete(self, request: Request) -> Response:
        name = request.path_params["recipient"]
        return await confirmed(
            self._changes,
            request,
            ops.DELETE_RECIPIENT,
            Target(recipient=name),
            lambda: self._service.drop_recipient(name),
            BASE,
        )

    async def confirm_revoke_grant(self, request: Request) -> Response:
        p = request.path_params
        name = (await self._recipient(p["recipient"])).recipient.name
        return confirm(
            request,
            f"Take share {p['share']} back from {name}?",
            "The recipient can no longer see the share or read its tables.",
            f"{BASE}/{q(name)}/grants/{q(p['share'])}/revoke",
            f"{BASE}/{q(name)}",
            "Revoke the grant",
        )

    async def revoke_grant(self, request: Request) -> Response:
        p = request.path_params
        return await confirmed(
            self._changes,
            request,
            ops.UPDATE_PERMISSIONS,
            Target(share=p["share"], recipient=p["recipient"]),
            lambda: self._service.revoke_grant(p["share"], p["recipient"]),
            f"{BASE}/{q(p['recipient'])}",
        )

    # -- helpers ---------------------------------------------------------------------------
    def _creation(
        self,
        name: str,
        properties: dict[str, str],
        lifetime: timedelta | None,
        entries: list[str],
        kind: str,
        *,
        activation: bool,
    ) -> Callable[[], IssuedToken | ActivationLink]:
        """The change that creates a recipient with its first credential, or
        (``activation``) with the link that issues it."""
        spec = RecipientSpec(properties, lifetime, ip_access_list=entries, authentication_type=kind)
        if activation:
            return lambda: self._service.create_recipient_with_link(name, spec)
        return lambda: self._service.create_recipient(name, spec)

    async def _edit(self, request: Request, operation: str, field: str, make: Any) -> Response:
        """A form of the recipient's page: ``make(fields, errors)`` checks the fields and
        gives the change; a problem is shown next to ``field`` and nothing changes."""
        fields = await self._changes.posted(request)
        if fields is None:
            return refused(request)
        name = request.path_params["recipient"]
        errors = forms.FormErrors()
        change = make(fields, errors)
        target = Target(recipient=name, share=forms.text(fields, "share") or None)
        if errors:
            self._changes.refused(request, operation, target, forms.invalid(errors))
            return await self.show(request, errors, fields)
        try:
            await self._changes.run(request, operation, target, change)
        except ChangeFailed as exc:
            if isinstance(exc.error, ResourceNotFoundError) and field != "share":
                raise exc.error from None
            return await self.show(request, forms.FormErrors({field: exc.error.message}), fields)
        return RedirectResponse(f"{BASE}/{q(name)}", status_code=303)
