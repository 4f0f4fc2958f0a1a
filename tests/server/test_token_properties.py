"""Property: page tokens, refresh tokens, listing page tokens and query ids made by the
server open to what was sealed in them, and any other text, a changed character or a
token of another kind is refused (or, for a change base64 ignores, opens to the same
payload) with the module's own error (a 400, or the 404 of an
unknown query), never another exception."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deltaport.protocol.errors import InvalidParameterError, ResourceNotFoundError
from deltaport.server.paging.listing import PageTokens
from deltaport.server.paging.query_ids import QueryIds
from deltaport.server.paging.table_pages import TableTokens
from deltaport.server.paging.tokens import TokenSigner

KEY = b"a-key-for-token-properties-0123456789"
SIGNER = TokenSigner(KEY)
TABLES = TableTokens(SIGNER)
LISTINGS = PageTokens(KEY)
QUERIES = QueryIds(SIGNER)
INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
TOKEN_TEXT = st.one_of(
    st.text(max_size=80),
    st.text(alphabet="ABCDEFabcdef0123456789-_.=", max_size=80),
    st.binary(max_size=40).map(lambda b: b.hex() + "." + b.hex()),
)


def _refused(open_token: object) -> None:
    with pytest.raises(InvalidParameterError):
        open_token()  # type: ignore[operator]


@settings(max_examples=300)
@given(TOKEN_TEXT, st.text(max_size=10), st.text(max_size=10))
def test_any_text_is_refused_as_every_kind_of_token(token: str, table: str, query: str) -> None:
    _refused(lambda: TABLES.open_page(token, table, query))
    _refused(lambda: TABLES.open_refresh(token, table, query))
    _refused(lambda: LISTINGS.decode(table, token))
    with pytest.raises(ResourceNotFoundError):
        QUERIES.open(token, "holder", table)


@settings(max_examples=300)
@given(st.text(max_size=20), st.text(max_size=20), INT64, INT64, INT64, st.data())
def test_tokens_round_trip_and_any_change_is_refused(
    table: str, query: str, start: int, version: int, offset: int, data: st.DataObject
) -> None:
    page = TABLES.page_token(table, query, start, version, offset)
    cursor = TABLES.open_page(page, table, query)
    assert (cursor.start, cursor.version, cursor.offset) == (start, version, offset)
    refresh = TABLES.refresh_token(table, query, version)
    assert TABLES.open_refresh(refresh, table, query).version == version
    _refused(lambda: TABLES.open_refresh(page, table, query))  # another kind
    _refused(lambda: TABLES.open_page(page, table + "x", query))  # another table
    _refused(lambda: TABLES.open_page(page, table, query + "x"))  # other parameters
    at = data.draw(st.integers(0, len(page) - 1))
    replacement = data.draw(st.characters(exclude_characters=page[at]))
    changed = page[:at] + replacement + page[at + 1 :]
    try:
        opened = TABLES.open_page(changed, table, query)
    except InvalidParameterError:
        return
    # base64 decoding ignores the unused bits of a last character: the same token
    assert opened == cursor


@given(st.text(max_size=20), st.integers(0, 2**62))
def test_listing_tokens_round_trip(scope: str, offset: int) -> None:
    assert LISTINGS.decode(scope, LISTINGS.encode(scope, offset)) == offset
    _refused(lambda: LISTINGS.decode(scope + "x", LISTINGS.encode(scope, offset)))


def test_expired_tokens_are_refused() -> None:
    token = SIGNER.seal("table-page", ["t", "q", 0, 1, 2], int(time.time()) - 1)
    with pytest.raises(InvalidParameterError, match="expired"):
        TABLES.open_page(token, "t", "q")
