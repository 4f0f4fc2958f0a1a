"""Property: the Iceberg catalog's listings take any ``pageSize`` and ``pageToken`` text
and either answer a page or refuse it with ``BadRequest`` (a 400), never another exception;
following the tokens it gives lists every name once, in order."""

from __future__ import annotations

import base64

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deltaport.iceberg.errors import BadRequest
from deltaport.iceberg.rest.operations import MAX_PAGE_SIZE
from deltaport.iceberg.rest.routes import name_page

NAMES = st.lists(st.text(min_size=1, max_size=8), unique=True, max_size=30)
SIZE_TEXT = st.one_of(
    st.text(max_size=12),
    st.text(alphabet="0123456789²³¹٣۴߅१", max_size=8),
    st.integers(min_value=-5, max_value=MAX_PAGE_SIZE + 5).map(str),
    st.integers(min_value=1, max_value=4400).map(lambda n: "9" * n),
)
TOKEN_TEXT = st.one_of(
    st.text(max_size=40),
    st.text(max_size=8).map(lambda t: base64.urlsafe_b64encode(t.encode()).decode()),
    st.binary(max_size=20).map(lambda b: base64.urlsafe_b64encode(b).decode()),
)


@settings(max_examples=400)
@given(NAMES, SIZE_TEXT, TOKEN_TEXT)
def test_any_size_and_token_is_a_page_or_a_bad_request(
    names: list[str], size: str, token: str
) -> None:
    try:
        page, following = name_page({"pageSize": size, "pageToken": token}, names)
    except BadRequest:
        return
    assert 0 < int(size) <= MAX_PAGE_SIZE
    assert len(page) <= int(size)
    assert all(name in names for name in page)
    assert following is None or page


@settings(max_examples=200)
@given(NAMES, st.integers(min_value=1, max_value=7))
def test_following_the_tokens_lists_every_name_once(names: list[str], size: int) -> None:
    listed: list[str] = []
    token: str | None = None
    while True:
        params = {"pageSize": str(size), **({"pageToken": token} if token else {})}
        page, token = name_page(params, names)
        listed += page
        if token is None:
            break
    assert listed == names


@pytest.mark.parametrize("size", ["²", "٣", "9" * 5000, "", " 1", "+1"])
def test_sizes_int_would_refuse_or_misread_are_bad_requests(size: str) -> None:
    with pytest.raises(BadRequest):
        name_page({"pageSize": size}, ["a", "b"])
