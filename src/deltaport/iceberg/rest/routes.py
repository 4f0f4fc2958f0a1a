"""The Iceberg REST catalog's routes (read-only), one catalog per share.

Every route asks the same catalog question as the Delta Sharing routes: the recipient
is the bearer token's, its IP access list applies, and a share, schema or table it was not
granted answers exactly like one that does not exist. Tables with a partition filter are
not offered (a reader would get every partition's files). A table on cloud storage is
offered when it is shared in ``dir`` mode: its load answer carries the temporary
credentials directory access vends, which reach its data files and its Iceberg files (kept
under its own location); without ``dir`` mode no credential may be given, so it is not.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Mapping
from typing import Any

import msgspec
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import URLPath
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, NoMatchFound
from starlette.types import Receive, Scope, Send

from deltaport.catalog.model import Recipient, SharedTable
from deltaport.delta.errors import DeltaError
from deltaport.iceberg.convert.tables import IcebergTables
from deltaport.iceberg.errors import (
    BadRequest,
    Forbidden,
    IcebergError,
    InternalServerError,
    NoSuchNamespace,
    NoSuchResource,
    NoSuchTable,
    NotAuthorized,
    ServiceUnavailable,
    TooManyRequests,
    UnsupportedOperation,
    UnsupportedTable,
)
from deltaport.iceberg.model.catalog import (
    CatalogConfig,
    ErrorModel,
    GetNamespaceResponse,
    IcebergErrorResponse,
    ListNamespacesResponse,
    ListTablesResponse,
    LoadCredentialsResponse,
    LoadTableResult,
    ReportMetricsRequest,
    TableIdentifier,
)
from deltaport.iceberg.rest import operations as ops
from deltaport.iceberg.rest.credentials import file_io_properties, storage_credentials
from deltaport.iceberg.rest.operations import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, SNAPSHOTS
from deltaport.observe.audit_log import AuditLog
from deltaport.protocol.credentials import DIR, TemporaryCredentials, TemporaryCredentialsRequest
from deltaport.protocol.echo import echo
from deltaport.protocol.errors import SharingError, TooManyRequestsError
from deltaport.server.http.audited import RecipientGuard, SharingAudit
from deltaport.server.limits.sharing_limits import SharingLimits
from deltaport.server.sources.catalog_source import CatalogSource
from deltaport.server.tables.credentials import CredentialService
from deltaport.server.tables.errors import table_failure
from deltaport.sharing import RefusalKind, TableRefusal, TableResolver
from deltaport.storage import StorageError
from deltaport.web.operation_routes import operation_route

log = logging.getLogger(__name__)

BASE_PATH = "/iceberg"


class IcebergCatalog:
    """The catalog's routes over ``source`` (who asks and what it may see), ``resolver``
    (the sharing API's, which answers what a table is for the asking recipient) and
    ``tables`` (the Iceberg metadata of the Delta tables)."""

    def __init__(
        self,
        source: CatalogSource,
        tables: IcebergTables,
        limits: SharingLimits,
        audit: AuditLog | None = None,
        credentials: CredentialService | None = None,
        resolver: TableResolver | None = None,
    ) -> None:
        self._source = source
        self._resolver = resolver or TableResolver()
        self._tables = tables
        self._credentials = credentials
        sharing_audit = SharingAudit(audit) if audit is not None else None
        self._guard = RecipientGuard(source, limits, sharing_audit, _refusal)

    def routes(self, base: str = BASE_PATH) -> list[BaseRoute]:
        """The route of each operation of :mod:`~deltaport.iceberg.rest.operations` but the
        document's (the mount serves it), a HEAD before the GET of its path (Starlette
        answers a HEAD with the first route taking it); then everything else."""
        served = [
            (ops.GET_CONFIG, self.config),
            (ops.LIST_NAMESPACES, self.list_namespaces),
            (ops.NAMESPACE_EXISTS, self.namespace_exists),
            (ops.GET_NAMESPACE, self.get_namespace),
            (ops.LIST_TABLES, self.list_tables),
            (ops.TABLE_EXISTS, self.table_exists),
            (ops.LOAD_TABLE, self.load_table),
            (ops.LOAD_CREDENTIALS, self.load_credentials),
            (ops.REPORT_METRICS, self.report_metrics),
        ]
        return [
            *(operation_route(base, op, self._guard(handler)) for op, handler in served),
            *(operation_route(base, op, refuse_write) for op in ops.REFUSED_WRITES),
            EverythingElse(base),
        ]

    # -- routes ----------------------------------------------------------------------------
    async def config(self, request: Request, recipient: Recipient) -> Response:
        warehouse = request.query_params.get("warehouse")
        view = self._source.view()
        if not warehouse:
            shares = view.shares(recipient)
            if len(shares) != 1:
                raise BadRequest(
                    "name a share as the warehouse (warehouse=<share>): this recipient "
                    f"may read {len(shares)} shares"
                )
            warehouse = shares[0].name
        share = view.share(recipient, warehouse)
        return _json(
            CatalogConfig(
                defaults={},
                overrides={"prefix": f"shares/{share.name}"},
                endpoints=ops.config_endpoints(),
            )
        )

    async def list_namespaces(self, request: Request, recipient: Recipient) -> Response:
        share = request.path_params["share"]
        names = [s.name for s in self._source.view().schemas(recipient, share)]
        if request.query_params.get("parent"):
            names = []
        page, token = name_page(request.query_params, names)
        return _json(ListNamespacesResponse([[n] for n in page], token))

    async def get_namespace(self, request: Request, recipient: Recipient) -> Response:
        return _json(GetNamespaceResponse([self._schema(request, recipient)], {}))

    async def namespace_exists(self, request: Request, recipient: Recipient) -> Response:
        self._schema(request, recipient)
        return Response(status_code=204)

    def _schema(self, request: Request, recipient: Recipient) -> str:
        p = request.path_params
        return self._source.view().schema(recipient, p["share"], _namespace(p["schema"])).name

    async def list_tables(self, request: Request, recipient: Recipient) -> Response:
        p = request.path_params
        namespace = _namespace(p["schema"])
        tables = self._source.view().tables(recipient, p["share"], namespace)
        names = [t.name for t in tables if offered(t)]
        page, token = name_page(request.query_params, names)
        identifiers = [TableIdentifier([namespace], n) for n in page]
        return _json(ListTablesResponse(identifiers, token))

    async def load_table(self, request: Request, recipient: Recipient) -> Response:
        table = self._table(request, recipient)
        snapshots = request.query_params.get("snapshots", "all")
        if snapshots not in SNAPSHOTS:
            raise BadRequest(f"snapshots must be all or refs, not {snapshots[:20]!r}")
        try:
            loaded = await run_in_threadpool(self._tables.load, table, snapshots == "all")
        except (DeltaError, StorageError) as exc:
            raise table_failure(table, exc) from None
        etag = f'"{loaded.etag}-{snapshots}"'
        if request.headers.get("if-none-match") == etag:
            return Response(status_code=304, headers={"ETag": etag})
        vended = await self._vend(table, recipient)
        body = LoadTableResult(
            metadata_location=loaded.metadata_location,
            metadata=loaded.document,
            config=file_io_properties(vended) if vended else {},
            storage_credentials=storage_credentials(vended) if vended else [],
        )
        return _json(body, headers={"ETag": etag})

    async def table_exists(self, request: Request, recipient: Recipient) -> Response:
        self._table(request, recipient)
        return Response(status_code=204)

    async def load_credentials(self, request: Request, recipient: Recipient) -> Response:
        vended = await self._vend(self._table(request, recipient), recipient)
        return _json(LoadCredentialsResponse(storage_credentials(vended) if vended else []))

    async def _vend(self, table: SharedTable, recipient: Recipient) -> TemporaryCredentials | None:
        """The credential for a cloud table's location (renewed by the credential cache
        before it expires); None for a table on local disk."""
        if table.location.kind == "local":
            return None
        if self._credentials is None:
            raise ServiceUnavailable("temporary credentials are not served by this catalog")
        answer = await run_in_threadpool(
            self._credentials.vend, table, recipient, TemporaryCredentialsRequest()
        )
        return answer.credentials

    async def report_metrics(self, request: Request, recipient: Recipient) -> Response:
        self._table(request, recipient)
        try:
            report = msgspec.json.decode(await request.body() or b"{}", type=ReportMetricsRequest)
        except msgspec.ValidationError as exc:
            raise BadRequest(f"the metrics report is malformed: {exc}") from None
        except (msgspec.DecodeError, RecursionError):  # nested deeper than it decodes
            raise BadRequest("the metrics report is not valid JSON") from None
        log.info(
            "iceberg metrics report from %s for %s: %s",
            recipient.name,
            request.path_params["table"],
            (report.report_type or "unknown")[:40],
        )
        return Response(status_code=204)

    def _table(self, request: Request, recipient: Recipient) -> SharedTable:
        p = request.path_params
        namespace = _namespace(p["schema"])
        view = self._source.view()
        table = self._resolver.table(view, recipient, p["share"], namespace, p["table"])
        if not offered(table):
            raise NoSuchTable(f"table {namespace}.{p['table']} does not exist")
        return table


class EverythingElse(BaseRoute):
    """Every other request under the catalog's base path, whatever its method and whatever
    its path holds (a newline too, which a ``{rest:path}`` route does not match): a GET or
    HEAD asks for a resource that does not exist, anything else for a write this read-only
    catalog refuses; both answered in the specification's error shape, to anyone."""

    def __init__(self, base: str) -> None:
        self._prefix = base + "/"

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope["type"] == "http" and scope["path"].startswith(self._prefix):
            return Match.FULL, {}
        return Match.NONE, {}

    def url_path_for(self, name: str, /, **path_params: Any) -> URLPath:
        raise NoMatchFound(name, path_params)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] in ("GET", "HEAD"):
            error: IcebergError = NoSuchResource("no such route in this catalog")
        else:
            error = UnsupportedOperation("this catalog is read-only")
        await error_response(error)(scope, receive, send)


async def refuse_write(request: Request) -> Response:
    """A write operation of the specification, refused to anyone: the catalog is read-only."""
    return error_response(UnsupportedOperation("this catalog is read-only"))


def offered(table: SharedTable) -> bool:
    """Whether Iceberg readers are offered ``table``: not with a partition filter (its
    readers would reach every partition); on cloud storage only in ``dir`` mode (the mode
    whose credentials its readers are given)."""
    if table.partition_filter is not None:
        return False
    return table.location.kind == "local" or table.access.offers(DIR)


def _namespace(text: str) -> str:
    """A namespace path parameter: one level (levels would be joined by ``0x1F``)."""
    if "\x1f" in text:
        raise NoSuchNamespace(f"namespace {text.replace(chr(31), '.')} does not exist")
    return text


def name_page(params: Mapping[str, str], names: list[str]) -> tuple[list[str], str | None]:
    """The page of ``names`` (in catalog order) that the query ``params`` ask for (after
    the name in ``pageToken``, ``pageSize`` long), and the next page's token; raises
    :class:`BadRequest` for a size or token this catalog does not take."""
    size_text = params.get("pageSize")
    size = DEFAULT_PAGE_SIZE
    if size_text is not None:
        # ASCII digits only, and few of them: int() refuses other Unicode digits and more
        # than 4,300 digits with a ValueError
        short = size_text.isascii() and size_text.isdigit() and len(size_text) <= 9
        size = int(size_text) if short else 0
        if not 0 < size <= MAX_PAGE_SIZE:
            raise BadRequest(f"pageSize must be between 1 and {MAX_PAGE_SIZE}")
    start = 0
    token = params.get("pageToken")
    if token:
        try:
            after = base64.urlsafe_b64decode(token.encode()).decode()
        except (ValueError, UnicodeDecodeError):
            raise BadRequest("pageToken is not a token this catalog gave") from None
        start = next((i + 1 for i, n in enumerate(names) if n == after), len(names))
    page = names[start : start + size]
    more = start + size < len(names)
    next_token = base64.urlsafe_b64encode(page[-1].encode()).decode() if more else None
    return page, next_token


def _refusal(exc: Exception, request: Request) -> tuple[Response, str]:
    """Every failure in the specification's shape (its exception type the audited code):
    an Iceberg reader parses no other, not even for an unexpected error."""
    if isinstance(exc, SharingError):
        return error_response(_sharing_error(exc, request)), exc.error_code
    if isinstance(exc, TableRefusal):
        exc = iceberg_error(exc, request)
    if isinstance(exc, UnsupportedTable):
        exc = BadRequest(str(exc))
    if isinstance(exc, IcebergError):
        return error_response(exc), exc.kind
    log.error("unexpected error on %s %s", request.method, echo(request.url.path), exc_info=exc)
    failed = InternalServerError("the catalog could not answer; the server's log says why")
    return error_response(failed), failed.kind


def before_routing_error(error: SharingError) -> IcebergErrorResponse:
    """A request refused before any route (a body, path or header over the listener's
    limits) in the specification's error shape: the reader's bad request, with the status
    it is answered with (413, 414 or 431)."""
    return IcebergErrorResponse(ErrorModel(error.message, BadRequest.kind, error.status))


def error_response(error: IcebergError) -> Response:
    """``error`` in the specification's error shape (with ``Retry-After`` when over a rate)."""
    body = IcebergErrorResponse(ErrorModel(str(error), error.kind, error.status))
    answer = _json(body, status_code=error.status)
    if isinstance(error, TooManyRequests):
        answer.headers["retry-after"] = str(error.retry_after)
    return answer


def _json(
    body: msgspec.Struct, status_code: int = 200, headers: Mapping[str, str] | None = None
) -> Response:
    encoded = msgspec.json.encode(body)
    return Response(encoded, status_code, headers, media_type="application/json")


def iceberg_error(refusal: TableRefusal, request: Request) -> IcebergError:
    """The resolver's refusal in the specification's shape: a table not granted is one that
    does not exist; a version the rules do not serve is the reader's bad request, as on the
    sharing API."""
    if refusal.kind is RefusalKind.NOT_FOUND:
        p = request.path_params
        return NoSuchTable(f"table {p.get('schema')}.{p.get('table')} does not exist")
    return BadRequest(refusal.message)


def _sharing_error(exc: SharingError, request: Request) -> IcebergError:
    """A catalog refusal in the Iceberg shape: what did not exist is named by what was
    asked (a share not granted is a namespace or table that does not exist)."""
    message = exc.message
    if isinstance(exc, TooManyRequestsError):
        return TooManyRequests(message, exc.retry_after)
    if exc.status == 401:
        return NotAuthorized(message)
    if exc.status == 403:
        return Forbidden(message)
    if exc.status == 404:
        p = request.path_params
        if "table" in p:
            return NoSuchTable(f"table {p.get('schema')}.{p['table']} does not exist")
        if "schema" in p:
            return NoSuchNamespace(f"namespace {p['schema']} does not exist")
        return NoSuchNamespace(message)
    if exc.status == 503:
        return ServiceUnavailable(message)
    if exc.status == 400:
        return BadRequest(message)
    return _Failed(message, exc.status)


class _Failed(IcebergError):
    kind = "ServerErrorException"

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status
