"""The HTTP layer: Starlette routes that only translate HTTP <-> catalog and service calls."""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import timedelta
from typing import TypeVar

import msgspec
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import BaseRoute

from deltaport.catalog.model import CatalogView, Recipient, SharedTable
from deltaport.config.model import ServerConfig
from deltaport.config.urls import iceberg_endpoint_for, public_url
from deltaport.observe.audit_log import AuditLog
from deltaport.observe.audit_record import AnsweredFiles
from deltaport.observe.health import Readiness
from deltaport.observe.metrics import CATALOG_SIZES, CatalogCounts, count_served, count_vended
from deltaport.protocol.actions import (
    GetShareResponse,
    GetTableResponse,
    ListSchemasResponse,
    ListSharesResponse,
    ListTablesResponse,
    QueryTableRequest,
)
from deltaport.protocol.capabilities import HEADER as CAPABILITIES_HEADER
from deltaport.protocol.capabilities import Capabilities, parse_capabilities, response_header
from deltaport.protocol.credentials import URL
from deltaport.protocol.echo import echo
from deltaport.protocol.errors import (
    InternalError,
    MethodNotAllowedError,
    ResourceNotFoundError,
    SharingError,
    TooManyRequestsError,
)
from deltaport.protocol.file_batch import HEADER as FILE_BATCH_HEADER
from deltaport.protocol.file_id_hash import HEADER as FILE_ID_HASH_HEADER
from deltaport.protocol.file_id_hash import parse_file_id_hash
from deltaport.protocol.params import int_param, json_body
from deltaport.server.answers.client_gone import closing_body, while_connected
from deltaport.server.answers.ndjson import CONTENT_TYPE as NDJSON
from deltaport.server.files.endpoint import FilesFirst, files_path, files_routes
from deltaport.server.files.reader_seal import ReaderSeal
from deltaport.server.files.signing import TableUrlSigner
from deltaport.server.http.async_query import AsyncQueryAnswers
from deltaport.server.http.audited import RecipientGuard, SharingAudit, public_routes
from deltaport.server.http.hot_routes import HotRoutesFirst
from deltaport.server.http.items import schema_item, share_item, table_item
from deltaport.server.http.server_keys import derive_key, server_key
from deltaport.server.http.warm_up import warmed_up
from deltaport.server.limits.sharing_limits import SharingLimits
from deltaport.server.oauth.activation import Activation
from deltaport.server.oauth.token_endpoint import TokenEndpoint
from deltaport.server.openapi import document as sharing
from deltaport.server.openapi.catalog_routes import OAUTH_TOKEN
from deltaport.server.openapi.parameters import TABLE_VERSION_HEADER as VERSION_HEADER
from deltaport.server.openapi.root import ROOT_DOCUMENT_PATH, root_document
from deltaport.server.paging.listing import PageTokens
from deltaport.server.paging.query_ids import MAX_QUERY_ID_LENGTH, QueryIds
from deltaport.server.paging.snapshot_pages import SnapshotPages
from deltaport.server.paging.table_pages import TableTokens
from deltaport.server.paging.tokens import TokenSigner
from deltaport.server.sources.catalog_source import (
    CatalogSource,
    DatabaseCatalog,
    catalog_source,
)
from deltaport.server.tables.async_queries import AsyncQueries, async_settings
from deltaport.server.tables.changes import ChangeService, changes_query
from deltaport.server.tables.credentials import CredentialService, decode_request, require_mode
from deltaport.server.tables.errors import refusals_answered
from deltaport.server.tables.selection import HintSettings
from deltaport.server.tables.service import TableResponse, TableService
from deltaport.sharing import TableResolver
from deltaport.storage import Location
from deltaport.storage.local_urls import LocalUrlSigner
from deltaport.web.body_limit import BodyLimit
from deltaport.web.client_address import ClientAddresses
from deltaport.web.error_shapes import ErrorShapes
from deltaport.web.header_limit import HeaderLimit, PathLimit
from deltaport.web.health import health_routes
from deltaport.web.hsts import StrictTransport
from deltaport.web.operation_routes import check_documented, document_route, operation_route
from deltaport.web.request_metrics import RequestMetrics

log = logging.getLogger(__name__)

JSON = "application/json; charset=utf-8"
FILES_PATH = "/files"
TABLE_FORMAT = "delta"
"""The format OpenSharing's Get Table names: every shared table is a Delta table."""

T = TypeVar("T")

_encode = msgspec.json.encode
_query_decoder = msgspec.json.Decoder(QueryTableRequest)


def create_app(
    config: ServerConfig, audit: AuditLog | None = None, queries: AsyncQueries | None = None
) -> Starlette:
    """The ASGI app serving ``config`` (the sharing API under ``config.endpoint``), keeping
    an audit record of each request in ``audit``; ``queries`` prepares asynchronous
    queries (default: as ``config.asyncQueries`` says)."""
    key = server_key(config)
    seal = ReaderSeal(derive_key(key, "file-url-readers"))
    catalog = catalog_source(config, seal, derive_key(key, "oauth-access-tokens"))
    local_signer = LocalUrlSigner(derive_key(key, "local-file-urls"), _files_url(config))
    url_signer = TableUrlSigner(local_signer, seal)
    url_lifetime = timedelta(seconds=config.pre_signed_url_timeout_seconds)
    table_tokens = TableTokens(TokenSigner(derive_key(key, "table-tokens")))
    resolver = TableResolver(budget_bytes=config.snapshot_cache_bytes)
    service = TableService(
        url_signer,
        url_lifetime,
        HintSettings(
            config.evaluate_predicate_hints,
            config.evaluate_json_predicate_hints,
            max_hints=config.max_predicate_hints,
            max_length=config.max_predicate_hint_length,
            max_depth=config.max_predicate_hint_depth,
        ),
        resolver,
        pages=SnapshotPages(table_tokens),
    )
    changes = ChangeService(url_signer, url_lifetime, table_tokens, resolver)
    pages = PageTokens(derive_key(key, "page-tokens"))
    credentials = CredentialService(config)
    queries = queries or AsyncQueries(async_settings(config))
    ids = QueryIds(TokenSigner(derive_key(key, "async-query-ids")))
    answers = AsyncQueryAnswers(service, ids, queries)
    api = _Api(catalog, resolver, pages, service, changes, credentials, config, audit, answers)

    def table_root(table_key: str) -> Location | None:
        table = catalog.view().table_by_key(table_key)
        return table.location if table else None

    readiness = Readiness(catalog.view)
    CATALOG_SIZES.watch(CatalogCounts(catalog.view, catalog.recipient_count))
    routes: list[BaseRoute] = [
        *files_routes(local_signer, table_root, admit=catalog.may_read_file),
        *api.routes(config.endpoint),
        *health_routes(readiness),
        document_route(ROOT_DOCUMENT_PATH, api.root_openapi),
    ]
    if isinstance(catalog, DatabaseCatalog):
        activation = Activation(
            catalog.live.store,
            public_url(config) + config.endpoint,
            api.limits.failed_auth,
            iceberg_for=lambda endpoint: iceberg_endpoint_for(endpoint, config),
        )
        tokens = TokenEndpoint(
            catalog.live, config.oauth_access_token_lifetime_seconds, api.limits.failed_auth
        )
        token_route = operation_route(config.endpoint, OAUTH_TOKEN, tokens.answer)
        routes += public_routes([*activation.routes(), token_route], api.audit)
    check_documented(routes, {config.endpoint: api.openapi, "/": api.root_openapi})
    error_shapes = ErrorShapes()
    app = Starlette(
        routes=routes,
        middleware=[
            Middleware(RequestMetrics, listener="sharing"),
            Middleware(ClientAddresses, trusted_proxies=config.trusted_proxies),
            Middleware(PathLimit, longer={"queries": MAX_QUERY_ID_LENGTH}, shape=error_shapes),
            Middleware(HeaderLimit, shape=error_shapes),
            Middleware(StrictTransport),
            Middleware(BodyLimit, limit=config.max_request_body_bytes, shape=error_shapes),
            Middleware(
                FilesFirst,
                signer=local_signer,
                resolve_table_root=table_root,
                admit=catalog.may_read_file,
            ),
            Middleware(
                HotRoutesFirst,
                endpoint=config.endpoint,
                list_shares=api.guard(api.list_shares),
                table_version=api.guard(api.table_version),
            ),
        ],
        exception_handlers={HTTPException: _http_error, Exception: _unexpected_error},
        lifespan=warmed_up,
    )
    # a path with a trailing slash is unknown (404), not redirected: Starlette would build
    # the redirect from the request's Host header
    app.router.redirect_slashes = False
    app.state.openapi = api.openapi
    app.state.root_openapi = api.root_openapi
    app.state.catalog = catalog
    app.state.resolver = resolver
    app.state.error_shapes = error_shapes
    app.state.credentials = credentials
    app.state.limits = api.limits
    app.state.readiness = readiness
    app.state.async_queries = queries
    return app


def files_path_prefix(config: ServerConfig) -> str:
    """The path every local file URL of this server starts with."""
    return files_path(_files_url(config)) + "/"


def _files_url(config: ServerConfig) -> str:
    return public_url(config) + config.endpoint + FILES_PATH


class _Api:
    def __init__(
        self,
        source: CatalogSource,
        resolver: TableResolver,
        pages: PageTokens,
        service: TableService,
        changes: ChangeService,
        credentials: CredentialService,
        config: ServerConfig,
        audit: AuditLog | None,
        async_answers: AsyncQueryAnswers,
    ) -> None:
        self.source = source
        self.resolver = resolver
        self.files_url = _files_url(config)
        self.pages = pages
        self.service = service
        self.changes = changes
        self.credentials = credentials
        self.async_answers = async_answers
        catalog = isinstance(source, DatabaseCatalog)
        self.openapi = sharing.openapi_document(config.endpoint, catalog=catalog)
        self.root_openapi = root_document(config.endpoint, catalog=catalog)
        self.audit = SharingAudit(audit) if audit is not None else None
        self.limits = SharingLimits(config.rate_limits)
        self.guard = RecipientGuard(source, self.limits, self.audit, _refusal)

    @property
    def catalog(self) -> CatalogView:
        """The catalog as it is now (a database catalog changes while the server runs)."""
        return self.source.view()

    def routes(self, endpoint: str) -> list[BaseRoute]:
        """The API's routes under ``endpoint``, full paths without a ``Mount`` (one level
        of matching less), the table routes first (the most requested)."""
        handlers = [
            (sharing.QUERY_TABLE, self.query_table),
            (sharing.QUERY_INFO, self.query_info),
            (sharing.TABLE_VERSION, self.table_version),
            (sharing.TABLE_METADATA, self.table_metadata),
            (sharing.TABLE_CHANGES, self.table_changes),
            (sharing.TABLE_CREDENTIALS, self.table_credentials),
            (sharing.HEAD_TABLE, self.head_table),
            (sharing.GET_TABLE, self.get_table),
            (sharing.LIST_SHARES, self.list_shares),
            (sharing.GET_SHARE, self.get_share),
            (sharing.LIST_SCHEMAS, self.list_schemas),
            (sharing.LIST_TABLES, self.list_tables),
            (sharing.LIST_ALL_TABLES, self.list_all_tables),
        ]
        return [
            *(operation_route(endpoint, op, self.guard(handler)) for op, handler in handlers),
            document_route(endpoint + sharing.GET_OPENAPI.path, self.openapi),
        ]

    # -- listing ---------------------------------------------------------------------------
    async def list_shares(self, request: Request, recipient: Recipient) -> Response:
        shares = self.catalog.shares(recipient)
        page, token = self._page(request, recipient, "shares", shares)
        return _json(ListSharesResponse([share_item(s) for s in page], token))

    async def get_share(self, request: Request, recipient: Recipient) -> Response:
        share = self.catalog.share(recipient, request.path_params["share"])
        return _json(GetShareResponse(share_item(share)))

    async def list_schemas(self, request: Request, recipient: Recipient) -> Response:
        share = request.path_params["share"]
        schemas = self.catalog.schemas(recipient, share)
        page, token = self._page(request, recipient, f"schemas\0{share.casefold()}", schemas)
        return _json(ListSchemasResponse([schema_item(s) for s in page], token))

    async def list_tables(self, request: Request, recipient: Recipient) -> Response:
        share, schema = request.path_params["share"], request.path_params["schema"]
        tables = self.catalog.tables(recipient, share, schema)
        scope = f"tables\0{share.casefold()}\0{schema.casefold()}"
        page, token = self._page(request, recipient, scope, tables)
        return _json(ListTablesResponse([table_item(t) for t in page], token))

    async def list_all_tables(self, request: Request, recipient: Recipient) -> Response:
        share = request.path_params["share"]
        tables = self.catalog.all_tables(recipient, share)
        listing = f"all-tables\0{share.casefold()}"
        page, token = self._page(request, recipient, listing, tables)
        return _json(ListTablesResponse([table_item(t) for t in page], token))

    def _page(
        self, request: Request, recipient: Recipient, listing: str, items: list[T]
    ) -> tuple[list[T], str | None]:
        """A page of a listing; its page tokens are bound to the listing and to the
        recipient and bearer token it was answered for."""
        params = request.query_params
        max_results = int_param(params.get("maxResults"), "maxResults")
        scope = f"{recipient.binding}\0{listing}"
        return self.pages.page(scope, items, max_results, params.get("pageToken") or None)

    # -- tables ----------------------------------------------------------------------------
    def _table(self, request: Request, recipient: Recipient) -> SharedTable:
        p = request.path_params
        with refusals_answered():
            return self.resolver.table(self.catalog, recipient, p["share"], p["schema"], p["table"])

    async def get_table(self, request: Request, recipient: Recipient) -> Response:
        """OpenSharing's Get Table: the table's identifiers and format."""
        table = self._table(request, recipient)
        return _json(
            GetTableResponse(
                table.name, table.schema, table.share, TABLE_FORMAT, table.share_id, table.id
            )
        )

    async def head_table(self, request: Request, recipient: Recipient) -> Response:
        table = self._table(request, recipient)
        return Response(headers={VERSION_HEADER: str(await self._latest_version(table))})

    async def table_version(self, request: Request, recipient: Recipient) -> Response:
        table = self._table(request, recipient)
        # most ask for the latest version, without a query string to parse
        starting = (
            request.query_params.get("startingTimestamp") if request.scope["query_string"] else None
        )
        if starting is None:
            version = await self._latest_version(table)
        else:
            version = await run_in_threadpool(self.service.table_version, table, starting)
        return Response(headers={VERSION_HEADER: str(version)})

    async def _latest_version(self, table: SharedTable) -> int:
        """Listing a local ``_delta_log`` takes tens of microseconds, less than a hop to a
        worker thread, so it runs inline; remote listings go to a worker thread."""
        if table.location.kind == "local":
            return self.service.table_version(table, None)
        return await run_in_threadpool(self.service.table_version, table, None)

    async def table_metadata(self, request: Request, recipient: Recipient) -> Response:
        table = self._table(request, recipient)
        caps = parse_capabilities(request.headers.get(CAPABILITIES_HEADER))
        version = int_param(request.query_params.get("version"), "version")
        timestamp = request.query_params.get("timestamp")
        answer = await while_connected(
            request, self.service.metadata, table, caps, version, timestamp
        )
        return _stream(answer)

    async def query_table(self, request: Request, recipient: Recipient) -> Response:
        table = self._table(request, recipient)
        require_mode(table, URL)
        caps = _file_capabilities(request)
        body = await request.body()
        query = json_body(body, _query_decoder, QueryTableRequest())
        if caps.async_query:
            status = await self.async_answers.submit(recipient, table, caps, query)
            if status is not None:
                return status
        if query.startingVersion is not None:
            answer = await while_connected(request, self.changes.query_range, table, caps, query)
        else:
            answer = await while_connected(request, self.service.query, table, caps, query)
        return self._files_stream(request, recipient, table, answer)

    async def query_info(self, request: Request, recipient: Recipient) -> Response:
        """Get Query Info: an asynchronous query's status, then its pages."""
        table = self._table(request, recipient)
        require_mode(table, URL)
        answer = await self.async_answers.poll(request, recipient, table)
        if isinstance(answer, Response):
            return answer
        return self._files_stream(request, recipient, table, answer)

    async def table_changes(self, request: Request, recipient: Recipient) -> Response:
        table = self._table(request, recipient)
        require_mode(table, URL)
        caps = _file_capabilities(request)
        query = changes_query(request.query_params)
        answer = await while_connected(request, self.changes.changes, table, caps, query)
        return self._files_stream(request, recipient, table, answer)

    async def table_credentials(self, request: Request, recipient: Recipient) -> Response:
        table = self._table(request, recipient)
        wanted = decode_request(await request.body())
        answer = await run_in_threadpool(self.credentials.vend, table, recipient, wanted)
        count_vended(recipient, table)
        return _json(answer)

    def _files_stream(
        self, request: Request, recipient: Recipient, table: SharedTable, answer: TableResponse
    ) -> Response:
        """A streamed answer listing files, its facts handed to the audit record; for local
        tables it names the endpoint that sends many of them at once
        (:mod:`deltaport.server.files.file_batch`)."""
        count_served(recipient, table, answer.files, answer.size)
        request.state.answered_files = AnsweredFiles(
            answer.version, answer.files, answer.end_version
        )
        if table.location.kind != "local":
            return _stream(answer)
        return _stream(answer, {FILE_BATCH_HEADER: self.files_url})


def _file_capabilities(request: Request) -> Capabilities:
    """The capabilities of a request answered with files, with its ``fileidhash``."""
    caps = parse_capabilities(request.headers.get(CAPABILITIES_HEADER))
    file_id_hash = parse_file_id_hash(request.headers.get(FILE_ID_HASH_HEADER))
    return replace(caps, file_id_hash=file_id_hash) if file_id_hash else caps


def _stream(answer: TableResponse, extra_headers: dict[str, str] | None = None) -> Response:
    headers = {
        **(extra_headers or {}),
        VERSION_HEADER: str(answer.version),
        CAPABILITIES_HEADER: response_header(
            answer.response_format, answer.include_end_stream_action
        ),
    }
    if answer.file_id_hash is not None:
        headers[FILE_ID_HASH_HEADER] = answer.file_id_hash
    return StreamingResponse(closing_body(answer.body), media_type=NDJSON, headers=headers)


def _json(value: object) -> Response:
    return Response(_encode(value), media_type=JSON)


def _refusal(exc: Exception, request: Request) -> tuple[Response, str] | None:
    if isinstance(exc, SharingError):
        return error_response(exc), exc.error_code
    return None


def error_response(error: SharingError) -> Response:
    response = Response(_encode(error.body()), status_code=error.status, media_type=JSON)
    if isinstance(error, TooManyRequestsError):
        response.headers["retry-after"] = str(error.retry_after)
    return response


async def _http_error(request: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    if status == 404:
        return error_response(ResourceNotFoundError(f"no route for {echo(request.url.path)}"))
    if status == 405:
        return error_response(MethodNotAllowedError(f"{request.method} is not allowed here"))
    return error_response(InternalError())


async def _unexpected_error(request: Request, exc: Exception) -> Response:
    log.error("unexpected error on %s %s", *_what(request), exc_info=exc)
    return error_response(InternalError())


def _what(request: Request) -> tuple[str, str]:
    """Method and path of ``request`` for a log line (the path cut short)."""
    return request.method, echo(request.url.path)
