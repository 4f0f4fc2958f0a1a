"""Shares and their permissions: ``/api/2.1/unity-catalog/shares[/{name}[/permissions]]``.

A share update checks every table it adds or changes (reading storage) before it changes
the catalog, then makes all its changes in one transaction: a refused update leaves the
share as it was."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from deltaport.admin.unity.bodies import (
    CreateShare,
    ObjectUpdate,
    Unset,
    UpdatePermissions,
    UpdateShare,
    body,
    refuse_set,
)
from deltaport.admin.unity.errors import unity_json
from deltaport.admin.unity.objects import (
    TableSettings,
    find,
    object_json,
    schema_comment,
    schema_json,
    settings,
    shared_as,
)
from deltaport.admin.unity.paging import next_page_token, page, page_request
from deltaport.catalog.database.connection import Database
from deltaport.catalog.listings.by_name import shares_after
from deltaport.catalog.listings.summaries import ShareView, share_view
from deltaport.catalog.provider.service import (
    ADD,
    REMOVE,
    UPDATE,
    ChangeRefused,
    ProviderService,
    TableChange,
)
from deltaport.catalog.rows import KEEP, CatalogContents, ShareRow, TableRow
from deltaport.protocol.errors import InvalidParameterError, ResourceNotFoundError
from deltaport.protocol.names import name_key

SELECT = "SELECT"


class SharesApi:
    def __init__(self, service: ProviderService, database: Database) -> None:
        """Changes go through ``service``; pages and views are read from ``database``."""
        self._service = service
        self._database = database

    def routes(self, wrap: Any, prefix: str) -> list[BaseRoute]:
        shares = prefix + "shares"
        permissions = shares + "/{share}/permissions"
        return [
            Route(shares, wrap(self.create), methods=["POST"]),
            Route(shares, wrap(self.listing), methods=["GET"]),
            Route(shares + "/{share}", wrap(self.get), methods=["GET"]),
            Route(shares + "/{share}", wrap(self.update), methods=["PATCH"]),
            Route(shares + "/{share}", wrap(self.delete), methods=["DELETE"]),
            Route(permissions, wrap(self.permissions), methods=["GET"]),
            Route(permissions, wrap(self.update_permissions), methods=["PATCH"]),
        ]

    async def create(self, request: Request) -> Response:
        given: CreateShare = await body(request, CreateShare)
        refuse_set(given, "", ("storage_root",), "deltaport shares tables where they are stored")
        await run_in_threadpool(self._service.create_share, given.name, given.comment)
        return await self._answer(given.name, True)

    async def listing(self, request: Request) -> Response:
        size, after = page_request(request.query_params)
        found = await run_in_threadpool(shares_after, self._database, after, size + 1)
        token = next_page_token([s.name for s in found], size)
        out: dict[str, Any] = {"shares": [_share_json(s, None) for s in found[:size]]}
        if token:
            out["next_page_token"] = token
        return unity_json(out)

    async def get(self, request: Request) -> Response:
        objects = request.query_params.get("include_shared_data", "true").lower() != "false"
        return await self._answer(request.path_params["share"], objects)

    async def delete(self, request: Request) -> Response:
        await run_in_threadpool(self._service.drop_share, request.path_params["share"])
        return unity_json({})

    async def update(self, request: Request) -> Response:
        name = request.path_params["share"]
        given: UpdateShare = await body(request, UpdateShare)
        refuse_set(given, "", ("new_name", "owner"), "not supported by deltaport")
        refuse_set(given, "", ("storage_root",), "deltaport shares tables where they are stored")
        contents = await run_in_threadpool(self._service.contents)
        tables = _tables(contents, name)
        schemas = [schema_comment(u, f"updates[{i}].") for i, u in enumerate(given.updates)]
        plans = [
            _plan(u, tables, f"updates[{i}].")
            for i, (u, schema) in enumerate(zip(given.updates, schemas, strict=True))
            if schema is None
        ]
        comments = [schema for schema in schemas if schema is not None]
        await run_in_threadpool(self._apply, name, given, plans, comments)
        return await self._answer(name, True)

    async def permissions(self, request: Request) -> Response:
        view = await self._view(request.path_params["share"])
        granted = [r.name for r in view.recipients]
        chosen, token = page(granted, lambda r: r, request.query_params)
        out: dict[str, Any] = {"privilege_assignments": [_assignment(r) for r in chosen]}
        if token:
            out["next_page_token"] = token
        return unity_json(out)

    async def update_permissions(self, request: Request) -> Response:
        name = request.path_params["share"]
        given: UpdatePermissions = await body(request, UpdatePermissions)
        for i, change in enumerate(given.changes):
            where = f"changes[{i}]."
            refuse_set(change, where, ("principal_id",), "name the recipient in principal")
            if not change.principal:
                raise InvalidParameterError(f"{where}principal: the recipient's name is required")
            for field in ("add", "remove"):
                for privilege in getattr(change, field):
                    if privilege != SELECT:
                        raise InvalidParameterError(
                            f"{where}{field}: a recipient is granted SELECT only, "
                            f"got {str(privilege)[:100]!r}"
                        )
        granted = [(c.principal or "", bool(c.add)) for c in given.changes if c.add or c.remove]
        await run_in_threadpool(self._service.change_grants, name, granted)
        if given.omit_permissions_list:
            return unity_json({})
        return await self.permissions(request)

    # -- the catalog -----------------------------------------------------------------------
    async def _answer(self, name: str, objects: bool) -> Response:
        view = await self._view(name)
        return unity_json(_share_json(view.share, view.tables if objects else None))

    async def _view(self, name: str) -> ShareView:
        """The share ``name`` with its tables and recipients; 404 when there is none."""
        view = await run_in_threadpool(share_view, self._database, name)
        if view is None:
            raise _missing(name)
        return view

    def _apply(
        self,
        share: str,
        given: UpdateShare,
        plans: list[_Plan],
        comments: list[tuple[str, str | None]],
    ) -> None:
        """Every change of the update in one transaction, each table to add or change
        checked first (reading storage): a refusal names its entry of ``updates``."""
        changes = [
            TableChange(
                _ACTIONS[plan.action], plan.table.schema, plan.table.name, plan.merged().spec
            )
            for plan in plans
        ]
        comment = KEEP if isinstance(given.comment, Unset) else given.comment
        try:
            self._service.change_share(share, comment, changes, comments)
        except ChangeRefused as exc:
            raise InvalidParameterError(f"{plans[exc.position].where}data_object: {exc}") from None


_ACTIONS = {"ADD": ADD, "REMOVE": REMOVE, "UPDATE": UPDATE}


@dataclass(frozen=True)
class _Plan:
    """One entry of ``updates``: the table it names (as it is, for REMOVE and UPDATE; as it
    will be, for ADD) and what it sets."""

    action: str
    where: str
    table: TableRow
    settings: TableSettings

    def merged(self) -> TableRow:
        s, t = self.settings, self.table
        return replace(
            t,
            history_shared=t.history_shared if s.history_shared is None else s.history_shared,
            start_version=t.start_version if s.start_version is None else s.start_version,
            partition_filter=s.partition_filter if s.partitions_given else t.partition_filter,
            comment=t.comment if s.comment is None else s.comment,
        )


def _plan(update: ObjectUpdate, tables: list[TableRow], where: str) -> _Plan:
    obj = update.data_object
    where_obj = where + "data_object."
    if update.action not in ("ADD", "REMOVE", "UPDATE"):
        raise InvalidParameterError(
            f"{where}action: ADD, REMOVE or UPDATE, got {update.action[:50]!r}"
        )
    given = settings(obj, where_obj)
    if update.action != "ADD":
        return _Plan(update.action, where, find(tables, obj, where_obj), given)
    alias = shared_as(obj, where_obj)
    if alias is None:
        raise InvalidParameterError(
            f"{where_obj}shared_as: required to add a table (schema.table, as recipients see it)"
        )
    new = TableRow("", alias[0], alias[1], obj.name, "", False, 0, None)
    return _Plan("ADD", where, new, given)


def _tables(contents: CatalogContents, share: str) -> list[TableRow]:
    """The tables of ``share``; 404 when there is no such share."""
    if not any(name_key(s.name) == name_key(share) for s in contents.shares):
        raise _missing(share)
    return [t for t in contents.tables if name_key(t.share) == name_key(share)]


def _assignment(recipient: str) -> dict[str, Any]:
    return {"principal": recipient, "privileges": [SELECT]}


def _missing(share: str) -> ResourceNotFoundError:
    return ResourceNotFoundError(f"share {share[:300]!r} does not exist")


def _share_json(share: ShareRow, tables: list[TableRow] | None) -> dict[str, Any]:
    """The share in the SDK's ``ShareInfo`` shape, with ``objects`` when ``tables`` given."""
    out: dict[str, Any] = {"name": share.name, "id": share.id}
    if share.comment is not None:
        out["comment"] = share.comment
    if tables is not None:
        out["objects"] = [object_json(t) for t in tables]
        names = {name_key(t.schema): t.schema for t in tables}
        out["objects"] += [
            schema_json(names[key], row.comment)
            for key, row in share.schemas
            if key in names and row.comment is not None
        ]
    return out
