"""Query ids of asynchronous queries (``asyncquery=true``), signed like page tokens.

A query id carries everything needed to prepare its query again: the table, the snapshot
version the submission pinned, the client's response formats and reader features, and the
query's parameters. Any replica with the same ``signingKey``, or this server after a
restart, can therefore answer a poll by preparing the same files again; no state has to be
shared. The id is bound to the recipient and the bearer token it was issued to: any other
caller, an altered id, an id of another server key or an expired one is answered as an
unknown query (404), so nobody learns whether someone else's query exists.
"""

from __future__ import annotations

import hashlib
import os
import time
from datetime import timedelta

import msgspec

from deltaport.protocol.actions import QueryTableRequest
from deltaport.protocol.errors import InvalidParameterError, ResourceNotFoundError
from deltaport.server.paging.tokens import TokenSigner

QUERY_ID_LIFETIME = timedelta(hours=24)
MAX_QUERY_ID_LENGTH = 4096
"""A longer id (very long predicate hints) is not issued: the query is answered at once."""
_PURPOSE = "async-query"


class QueryParameters(msgspec.Struct, array_like=True, omit_defaults=True):
    """The parameters of a snapshot query that decide its files (paging aside). A
    submission's ``refreshToken`` is not kept (ids appear in access logs): the version it
    pinned is the ticket's, and ``renew`` asks for a new refresh token on the first page."""

    predicateHints: list[str] | None = None
    jsonPredicateHints: str | None = None
    limitHint: int | None = None
    version: int | None = None
    timestamp: str | None = None
    includeRefreshToken: bool | None = None
    renew: bool = False

    @classmethod
    def of(cls, request: QueryTableRequest) -> QueryParameters:
        return cls(
            request.predicateHints,
            request.jsonPredicateHints,
            request.limitHint,
            request.version,
            request.timestamp,
            request.includeRefreshToken,
            request.refreshToken is not None,
        )

    def request(self, max_files: int | None, page_token: str | None) -> QueryTableRequest:
        """The synchronous request this query answers, for one page (the first page of a
        renewed query carries a new refresh token, as a synchronous refresh does)."""
        return QueryTableRequest(
            predicateHints=self.predicateHints,
            jsonPredicateHints=self.jsonPredicateHints,
            limitHint=self.limitHint,
            version=self.version,
            timestamp=self.timestamp,
            includeRefreshToken=self.includeRefreshToken or self.renew or None,
            maxFiles=max_files,
            pageToken=page_token,
        )


class QueryTicket(msgspec.Struct, array_like=True):
    """What a query id says: ``holder`` is a digest of the recipient's binding."""

    nonce: str
    holder: str
    table: str
    version: int | None
    """The pinned snapshot version (None: the version of the query's ``timestamp``)."""
    formats: list[str]
    reader_features: list[str] | None
    parameters: QueryParameters


def holder_of(binding: str) -> str:
    """The digest of a recipient binding a query id carries (not the credential itself)."""
    return hashlib.sha256(binding.encode()).hexdigest()[:32]


def new_nonce() -> str:
    return os.urandom(9).hex()


class QueryIds:
    def __init__(self, signer: TokenSigner, lifetime: timedelta = QUERY_ID_LIFETIME) -> None:
        self._signer = signer
        self._lifetime = lifetime

    def issue(self, ticket: QueryTicket, now: float | None = None) -> str | None:
        """The id of ``ticket``; None when it would be longer than
        :data:`MAX_QUERY_ID_LENGTH`."""
        issued = time.time() if now is None else now
        query_id = self._signer.seal(_PURPOSE, ticket, int(issued + self._lifetime.total_seconds()))
        return query_id if len(query_id) <= MAX_QUERY_ID_LENGTH else None

    def open(self, query_id: str, holder: str, table: str, now: float | None = None) -> QueryTicket:
        """The ticket of ``query_id`` when it was issued to ``holder`` for ``table``;
        otherwise the same 404 whatever the reason."""
        try:
            ticket = self._signer.open(_PURPOSE, query_id, QueryTicket, "queryId", now)
        except InvalidParameterError:
            raise unknown_query() from None
        if ticket.holder != holder or ticket.table != table:
            raise unknown_query()
        return ticket


def unknown_query() -> ResourceNotFoundError:
    return ResourceNotFoundError("the query is unknown or has expired; submit it again")
