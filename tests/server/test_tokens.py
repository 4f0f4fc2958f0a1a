"""The signed token format shared by page and refresh tokens."""

from __future__ import annotations

import time

import msgspec
import pytest

from deltaport.protocol.errors import InvalidParameterError
from deltaport.server.paging.table_pages import PageCursor, TableTokens, page_bounds
from deltaport.server.paging.tokens import TokenSigner


class Cursor(msgspec.Struct, array_like=True):
    table: str
    offset: int


def test_round_trip_and_checks() -> None:
    signer = TokenSigner(b"k" * 32)
    token = signer.seal("page", Cursor("t", 7), int(time.time()) + 60)
    assert signer.open("page", token, Cursor, "pageToken") == Cursor("t", 7)
    with pytest.raises(InvalidParameterError, match="not valid for this request"):
        signer.open("refresh", token, Cursor, "refreshToken")
    with pytest.raises(InvalidParameterError, match="expired"):
        signer.open("page", token, Cursor, "pageToken", now=time.time() + 120)
    with pytest.raises(InvalidParameterError, match="issued by another server"):
        TokenSigner(b"x" * 32).open("page", token, Cursor, "pageToken")
    body, _, mac = token.partition(".")
    for bad in (f"{body}x.{mac}", body, f".{mac}", "", "a.b.c", "%%%.%%%"):
        with pytest.raises(InvalidParameterError):
            signer.open("page", bad, Cursor, "pageToken")


def test_payload_of_another_shape_is_refused() -> None:
    signer = TokenSigner(b"k" * 32)
    token = signer.seal("page", ["only-one-field"], int(time.time()) + 60)
    with pytest.raises(InvalidParameterError, match="pageToken is not valid"):
        signer.open("page", token, Cursor, "pageToken")


def test_table_tokens_are_bound_to_table_and_query() -> None:
    tokens = TableTokens(TokenSigner(b"k" * 32))
    token = tokens.page_token("s.sc.t", "digest", 3, 9, 100)
    assert tokens.open_page(token, "s.sc.t", "digest") == PageCursor("s.sc.t", "digest", 3, 9, 100)
    with pytest.raises(InvalidParameterError, match="another table"):
        tokens.open_page(token, "s.sc.u", "digest")
    with pytest.raises(InvalidParameterError, match="other parameters"):
        tokens.open_page(token, "s.sc.t", "other")


def test_page_bounds() -> None:
    assert page_bounds(10, 0, None) == (0, 10)
    assert page_bounds(10, 8, 5) == (8, 10)
    assert page_bounds(10, 10, 5) == (10, 10)
    with pytest.raises(InvalidParameterError):
        page_bounds(10, 11, 5)
