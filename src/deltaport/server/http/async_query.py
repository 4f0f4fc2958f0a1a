"""Asynchronous Query Table (``asyncquery=true``) and Get Query Info
(``POST .../queries/{queryId}``): HTTP in, :mod:`deltaport.server.tables.async_queries`
and the table service underneath, the protocol's ``queryStatus`` line out."""

from __future__ import annotations

from collections.abc import Hashable

import msgspec
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from deltaport.catalog.model import Recipient, SharedTable
from deltaport.protocol.actions import QueryInfoRequest, QueryStatus, QueryStatusLine
from deltaport.protocol.actions import QueryTableRequest as QueryRequest
from deltaport.protocol.capabilities import HEADER as CAPABILITIES_HEADER
from deltaport.protocol.capabilities import Capabilities, parse_capabilities, response_header
from deltaport.protocol.errors import InvalidParameterError
from deltaport.protocol.params import json_body
from deltaport.server.answers.client_gone import while_connected
from deltaport.server.answers.ndjson import CONTENT_TYPE as NDJSON
from deltaport.server.paging.query_ids import (
    QueryIds,
    QueryParameters,
    QueryTicket,
    holder_of,
    new_nonce,
    unknown_query,
)
from deltaport.server.tables.async_queries import AsyncQueries, Failed, Pending, Prepare, access
from deltaport.server.tables.service import Selection, TableResponse, TableService, check_query

VERSION_HEADER = "Delta-Table-Version"
PENDING = "pending"
_info_decoder = msgspec.json.Decoder(QueryInfoRequest)


class AsyncQueryAnswers:
    def __init__(self, service: TableService, ids: QueryIds, queries: AsyncQueries) -> None:
        self.service = service
        self.ids = ids
        self.queries = queries

    async def submit(
        self, recipient: Recipient, table: SharedTable, caps: Capabilities, query: QueryRequest
    ) -> Response | None:
        """The ``queryStatus`` answer of a submitted snapshot query; None when the query
        is answered at once instead (a range query, or an id that would be too long)."""
        if query.startingVersion is not None or not self.queries.settings.enabled:
            return None
        check_query(query)
        if query.pageToken is not None:
            raise InvalidParameterError(
                "pageToken continues an asynchronous query with Get Query Info "
                "(POST .../queries/{queryId}), not with a new submission"
            )
        pin = self.service.pin(table, caps, query)
        version = pin.version
        if version is None:
            version = await run_in_threadpool(self.service.resolve_version, table, query)
        features = sorted(caps.reader_features) if caps.reader_features is not None else None
        parameters = QueryParameters.of(query)
        holder = holder_of(recipient.binding)
        key = query.idempotencyKey or query.idempotency_key
        dedupe: Hashable | None = None
        if key is not None:
            dedupe = (holder, table.key, key, msgspec.msgpack.encode(parameters))
            known = self.queries.submitted(dedupe, access(table))
            if known is not None:
                return _status(QueryStatus(known, PENDING), version)
        ticket = QueryTicket(
            new_nonce(),
            holder,
            table.key,
            version,
            list(caps.response_formats),
            features,
            parameters,
        )
        query_id = self.ids.issue(ticket)
        if query_id is None:
            return None
        prepare = self._preparation(table, ticket)
        self.queries.start(query_id, recipient.name, access(table), prepare, dedupe)
        return _status(QueryStatus(query_id, PENDING), version)

    async def poll(
        self, request: Request, recipient: Recipient, table: SharedTable
    ) -> Response | TableResponse:
        """A poll's answer: the query's status while it is not ready, then its pages."""
        asked = json_body(await request.body(), _info_decoder, QueryInfoRequest())
        if asked.maxFiles is not None and asked.maxFiles <= 0:
            raise InvalidParameterError("maxFiles must be positive")
        query_id = request.path_params["queryId"]
        if not self.queries.settings.enabled:
            raise unknown_query()
        ticket = self.ids.open(query_id, holder_of(recipient.binding), table.key)
        header = parse_capabilities(request.headers.get(CAPABILITIES_HEADER))
        caps = _ticket_capabilities(ticket, header.include_end_stream_action)
        query = ticket.parameters.request(asked.maxFiles, asked.pageToken)
        if query.version is not None or query.timestamp is not None:
            # the history rules as they are now: a new submission's error once they refuse
            self.service.resolve_version(table, query)
        prepare = self._preparation(table, ticket)
        state = self.queries.poll(query_id, recipient.name, access(table), prepare)
        if isinstance(state, Pending):
            return _status(QueryStatus(query_id, PENDING), ticket.version)
        if isinstance(state, Failed):
            failure = state.error.body()
            status = QueryStatus(query_id, "failed", failure.errorCode, failure.message)
            return _status(status, ticket.version)
        pin = self.service.pin(table, caps, query)
        selection = state.selection
        if selection is None:
            selection = await while_connected(request, prepare)
        return await while_connected(
            request, self.service.answer, table, caps, query, pin, selection
        )

    def _preparation(self, table: SharedTable, ticket: QueryTicket) -> Prepare:
        caps = _ticket_capabilities(ticket, False)
        query = ticket.parameters.request(None, None)
        travelled = query.version is not None or query.timestamp is not None
        # a time-travel query is prepared as asked, with the history checks again
        pinned = None if travelled else ticket.version

        def prepare() -> Selection:
            return self.service.select(table, caps, query, pinned)

        return prepare


def _ticket_capabilities(ticket: QueryTicket, include_end_stream_action: bool) -> Capabilities:
    features = frozenset(ticket.reader_features) if ticket.reader_features is not None else None
    return Capabilities(tuple(ticket.formats), features, include_end_stream_action, True)


def _status(status: QueryStatus, version: int | None) -> Response:
    """A ``queryStatus`` answer. It names the pinned version when there is one: the
    protocol has ``Delta-Table-Version`` only on a succeeded query's answer, but the
    reference Spark client fails on any NDJSON answer without it (the reference server's
    stub sends one)."""
    headers = {CAPABILITIES_HEADER: response_header(None, False, async_query=True)}
    if version is not None:
        headers[VERSION_HEADER] = str(version)
    body = msgspec.json.encode(QueryStatusLine(status)) + b"\n"
    return Response(body, media_type=NDJSON, headers=headers)
