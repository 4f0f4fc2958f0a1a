from __future__ import annotations

import base64

import pytest

from deltaport.diff.base.errors import InvalidPageTokenError
from deltaport.diff.history.paging import (
    PageState,
    decode_page_token,
    diff_fingerprint,
    encode_page_token,
)

FP = diff_fingerprint("file:///a", "file:///b")


def test_round_trip() -> None:
    state = PageState(base_version=3, left_head=5, right_head=2000, next_version=999)
    token = encode_page_token(state, FP)
    assert decode_page_token(token, FP) == state
    no_base = PageState(None, None, 7, 0)
    assert decode_page_token(encode_page_token(no_base, FP), FP) == no_base


def test_token_of_another_diff_is_refused() -> None:
    token = encode_page_token(PageState(1, 2, 3, 3), FP)
    with pytest.raises(InvalidPageTokenError, match="other tables"):
        decode_page_token(token, diff_fingerprint("file:///a", "file:///c"))


@pytest.mark.parametrize("token", ["", "not a token!", "abc", "eyJ2IjoxfQ"])
def test_garbage_is_refused(token: str) -> None:
    with pytest.raises(InvalidPageTokenError):
        decode_page_token(token, FP)


def test_altered_token_is_refused() -> None:
    token = encode_page_token(PageState(1, 2, 3, 3), FP)
    raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    altered = raw.replace(b'"next_version":3', b'"next_version":2')
    assert altered != raw
    forged = base64.urlsafe_b64encode(altered).decode().rstrip("=")
    with pytest.raises(InvalidPageTokenError, match="altered"):
        decode_page_token(forged, FP)


def test_invalid_page_token_error_is_a_value_error() -> None:
    assert issubclass(InvalidPageTokenError, ValueError)
