"""Shares, schemas and tables: the shares listed (and created), a share's page (its
schemas with what recipients see of each, their tables, who reads each table and through
which grant, the forms that change a schema and add a table), and the confirmations before
a share, a schema or a table is dropped."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from deltaport.catalog.listings import summaries
from deltaport.catalog.listings.summaries import ShareView
from deltaport.catalog.rows import CatalogError, SchemaDetails, TableRow, TableSpec
from deltaport.catalog.store_checks import check_name
from deltaport.config.model import ServerConfig
from deltaport.console.manage import filter_check, forms
from deltaport.console.manage.changes import ChangeFailed, Changes, Target
from deltaport.console.manage.confirm import confirm, confirmed, q, refused
from deltaport.console.manage.readers import READERS_SHOWN, readers
from deltaport.console.render import page
from deltaport.observe import audit_record as ops
from deltaport.protocol.credentials import ACCESS_MODES, URL
from deltaport.protocol.errors import ResourceExistsError, ResourceNotFoundError
from deltaport.protocol.params import int_param
from deltaport.storage.uri import is_relative_path

PAGE_SIZE = 100
BASE = "/console/shares"


class SharePages:
    def __init__(self, changes: Changes, config: ServerConfig) -> None:
        self._changes = changes
        self._service = changes.service
        self._database = changes.database
        self._config = config

    async def _share(self, name: str) -> ShareView:
        found = await run_in_threadpool(summaries.share_view, self._database, name)
        if found is None:
            raise ResourceNotFoundError(f"share {name[:300]!r} does not exist")
        return found

    async def _table(self, request: Request) -> TableRow:
        p = request.path_params
        found = await run_in_threadpool(
            summaries.shared_table, self._database, p["share"], p["schema"], p["table"]
        )
        if found is None:
            label = f"{p['share']}.{p['schema']}.{p['table']}"
            raise ResourceNotFoundError(f"table {label[:300]!r} does not exist")
        return found

    # -- the list ------------------------------------------------------------------------
    async def listing(
        self, request: Request, errors: forms.FormErrors | None = None, given: Any = None
    ) -> Response:
        offset = max(0, int_param(request.query_params.get("offset"), "offset") or 0)
        found = await run_in_threadpool(summaries.share_page, self._database, offset, PAGE_SIZE)
        return page(
            request,
            "manage/shares.html",
            status=400 if errors else 200,
            rows=found.rows,
            total=found.total,
            offset=offset,
            page_size=PAGE_SIZE,
            errors=errors or {},
            given=given or {},
        )

    async def create(self, request: Request) -> Response:
        fields = await self._changes.posted(request)
        if fields is None:
            return refused(request)
        name, comment = forms.text(fields, "name"), forms.text(fields, "comment") or None
        target = Target(share=name)
        try:
            await self._changes.run(
                request,
                ops.CREATE_SHARE,
                target,
                lambda: self._service.create_share(name, comment),
            )
        except ChangeFailed as exc:
            return await self.listing(request, forms.FormErrors(name=exc.error.message), fields)
        return RedirectResponse(f"{BASE}/{q(name)}", status_code=303)

    # -- one share -----------------------------------------------------------------------
    async def show(
        self, request: Request, errors: forms.FormErrors | None = None, given: Any = None
    ) -> Response:
        found = await self._share(request.path_params["share"])
        shown = found.recipients[:READERS_SHOWN]
        schemas: dict[str, list[Any]] = {}
        for t in found.tables:
            schemas.setdefault(t.schema, []).append((t, readers(t, shown)))
        return page(
            request,
            "manage/share.html",
            status=400 if errors else 200,
            share=found.share,
            schemas=schemas,
            details={name: found.share.schema(name) for name in schemas},
            recipients=found.recipients,
            names_shown=READERS_SHOWN,
            access_modes=ACCESS_MODES,
            errors=errors or {},
            given=given or {"access_modes": [URL]},
        )

    async def filter_report(self, request: Request) -> Response:
        """The htmx fragment under the partition filter field."""
        share = await self._share(request.path_params["share"])
        params = request.query_params
        location = params.get("location", "").strip()
        text = params.get("partition_filter", "").strip()
        if location and is_relative_path(location):
            found = filter_check.FilterReport(f"{location} is a relative path")
        else:
            found = await run_in_threadpool(
                filter_check.report,
                location,
                text,
                self._options_for,
                share.recipients,
            )
        return page(request, "manage/_filter_report.html", report=found, text=text)

    async def add_table(self, request: Request) -> Response:
        fields = await self._changes.posted(request)
        if fields is None:
            return refused(request)
        share = (await self._share(request.path_params["share"])).share
        errors = forms.FormErrors()
        schema, name = forms.text(fields, "schema"), forms.text(fields, "name")
        location = forms.text(fields, "location")
        text = forms.text(fields, "partition_filter") or None
        start = forms.whole_number(forms.text(fields, "start_version"), errors, "start_version")
        modes = [m for m in ACCESS_MODES if forms.checked(fields, f"mode_{m}")]
        errors.check("access_modes", None if modes else "choose at least one access mode")
        for field, value, what in (("schema", schema, "schema"), ("name", name, "table")):
            errors.check(field, _name_problem(value, what))
        full_name = f"{share.name}.{schema}.{name}"
        if not location:
            errors.check("location", "the table's location is required")
        elif is_relative_path(location):
            errors.check(
                "location", f"{location!r} is a relative path; give an absolute path or a URI"
            )
        else:
            found = await run_in_threadpool(
                filter_check.report, location, text or "", self._options_for, []
            )
            errors.check("location", found.location_problem)
            errors.check("partition_filter", found.problem)
        given = {**fields, "access_modes": modes}
        target = Target(table=full_name)
        if errors:
            self._changes.refused(request, ops.UPDATE_SHARE, target, forms.invalid(errors))
            return await self.show(request, errors, given)
        try:
            await self._changes.run(
                request,
                ops.UPDATE_SHARE,
                target,
                lambda: self._service.add_table(
                    full_name,
                    TableSpec(
                        location,
                        history_shared=forms.checked(fields, "history_shared"),
                        start_version=start,
                        partition_filter=text,
                        access_modes=tuple(modes),
                    ),
                ),
            )
        except ChangeFailed as exc:
            field = "name" if isinstance(exc.error, ResourceExistsError) else "location"
            return await self.show(request, forms.FormErrors({field: exc.error.message}), given)
        return RedirectResponse(f"{BASE}/{q(share.name)}#table-{q(full_name)}", status_code=303)

    async def set_schema(self, request: Request) -> Response:
        """What recipients see of a schema: its display name, comment and properties."""
        fields = await self._changes.posted(request)
        if fields is None:
            return refused(request)
        share, schema = request.path_params["share"], request.path_params["schema"]
        errors = forms.FormErrors()
        properties = forms.properties(fields.get("properties", ""), errors)
        given = {**fields, "schema_form": schema}
        target = Target(share=share)
        if errors:
            self._changes.refused(request, ops.UPDATE_SHARE, target, forms.invalid(errors))
            return await self.show(request, errors, given)
        try:
            await self._changes.run(
                request,
                ops.UPDATE_SHARE,
                target,
                lambda: self._service.set_schema_details(
                    share,
                    schema,
                    SchemaDetails(
                        forms.text(fields, "display_name") or None,
                        forms.text(fields, "comment") or None,
                        properties,
                    ),
                ),
            )
        except ChangeFailed as exc:
            return await self.show(request, forms.FormErrors(schema=exc.error.message), given)
        return RedirectResponse(f"{BASE}/{q(share)}#schema-{q(schema)}", status_code=303)

    async def edit_form(
        self, request: Request, errors: forms.FormErrors | None = None, given: Any = None
    ) -> Response:
        table = await self._table(request)
        current = {
            "history_shared": "on" if table.history_shared else "",
            "start_version": str(table.start_version),
            "partition_filter": table.partition_filter or "",
        }
        return page(
            request,
            "manage/table_edit.html",
            status=400 if errors else 200,
            table=table,
            errors=errors or {},
            given=given or current,
        )

    async def edit(self, request: Request) -> Response:
        fields = await self._changes.posted(request)
        if fields is None:
            return refused(request)
        table = await self._table(request)
        label = f"{table.share}.{table.schema}.{table.name}"
        errors = forms.FormErrors()
        start = forms.whole_number(forms.text(fields, "start_version"), errors, "start_version")
        text = forms.text(fields, "partition_filter") or None
        if text is not None:
            found = await run_in_threadpool(
                filter_check.report, table.location, text, self._options_for, []
            )
            errors.check("partition_filter", found.problem or found.location_problem)
        target = Target(table=label)
        if errors:
            self._changes.refused(request, ops.UPDATE_SHARE, target, forms.invalid(errors))
            return await self.edit_form(request, errors, fields)
        try:
            await self._changes.run(
                request,
                ops.UPDATE_SHARE,
                target,
                lambda: self._service.update_table(
                    label,
                    history_shared=forms.checked(fields, "history_shared"),
                    start_version=start,
                    partition_filter=text,
                ),
            )
        except ChangeFailed as exc:
            failed = forms.FormErrors(partition_filter=exc.error.message)
            return await self.edit_form(request, failed, fields)
        return RedirectResponse(f"{BASE}/{q(table.share)}#table-{q(label)}", status_code=303)

    # -- confirmations and drops ---------------------------------------------------------
    async def confirm_drop_share(self, request: Request) -> Response:
        found = await self._share(request.path_params["share"])
        share = found.share
        return confirm(
            request,
            f"Drop share {share.name}?",
            f"Its {len(found.tables)} table(s) stop being shared and its "
            f"{len(found.recipients)} grant(s) end. Nothing is deleted from storage.",
            f"{BASE}/{q(share.name)}/drop",
            f"{BASE}/{q(share.name)}",
            "Drop the share",
        )

    async def drop_share(self, request: Request) -> Response:
        share = request.path_params["share"]
        return await confirmed(
            self._changes,
            request,
            ops.DELETE_SHARE,
            Target(share=share),
            lambda: self._service.drop_share(share),
            BASE,
        )

    async def confirm_drop_schema(self, request: Request) -> Response:
        p = request.path_params
        share = (await self._share(p["share"])).share
        return confirm(
            request,
            f"Drop schema {share.name}.{p['schema']}?",
            "Every table of the schema stops being shared (a schema exists while it holds "
            "tables). Nothing is deleted from storage.",
            f"{BASE}/{q(share.name)}/schemas/{q(p['schema'])}/drop",
            f"{BASE}/{q(share.name)}",
            "Drop the schema",
        )

    async def drop_schema(self, request: Request) -> Response:
        p = request.path_params
        return await confirmed(
            self._changes,
            request,
            ops.UPDATE_SHARE,
            Target(share=p["share"]),
            lambda: self._service.drop_schema(p["share"], p["schema"]),
            f"{BASE}/{q(p['share'])}",
        )

    async def confirm_remove_table(self, request: Request) -> Response:
        p = request.path_params
        label = f"{p['share']}.{p['schema']}.{p['table']}"
        return confirm(
            request,
            f"Stop sharing {label}?",
            "Recipients can no longer read it. Nothing is deleted from storage.",
            f"{BASE}/{q(p['share'])}/schemas/{q(p['schema'])}/tables/{q(p['table'])}/remove",
            f"{BASE}/{q(p['share'])}",
            "Remove the table",
        )

    async def remove_table(self, request: Request) -> Response:
        p = request.path_params
        label = f"{p['share']}.{p['schema']}.{p['table']}"
        return await confirmed(
            self._changes,
            request,
            ops.UPDATE_SHARE,
            Target(table=label),
            lambda: self._service.remove_table(p["share"], p["schema"], p["table"]),
            f"{BASE}/{q(p['share'])}",
        )

    def _options_for(self, location: str) -> dict[str, str]:
        options, _ = self._config.location_settings(location)
        return dict(options)


def _name_problem(name: str, what: str) -> str | None:
    try:
        check_name(name, what)
    except CatalogError as exc:
        return str(exc)
    return None
