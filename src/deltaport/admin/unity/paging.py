"""Paging of the list routes as Unity Catalog pages them: ``max_results`` (0, the default,
means the server's page size; larger values are cut to :data:`MAX_PAGE`; negative is
refused) and ``page_token`` (opaque: the name after which the next page starts)."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Sequence
from typing import TypeVar

from starlette.datastructures import QueryParams

from deltaport.protocol.errors import InvalidParameterError
from deltaport.protocol.names import name_key
from deltaport.protocol.params import int_param

DEFAULT_PAGE = 100
MAX_PAGE = 1000

T = TypeVar("T")


def page(
    items: Sequence[T], name: Callable[[T], str], params: QueryParams
) -> tuple[list[T], str | None]:
    """One page of ``items`` in the order of their names (case-insensitive), and the token of
    the next page (None on the last)."""
    size = int_param(params.get("max_results"), "max_results") or 0
    if size < 0:
        raise InvalidParameterError(f"max_results must be 0 or more, got {size}")
    size = min(size or DEFAULT_PAGE, MAX_PAGE)
    after = _after(params.get("page_token"))
    ordered = sorted(items, key=lambda item: name_key(name(item)))
    if after is not None:
        ordered = [item for item in ordered if name_key(name(item)) > after]
    chosen = ordered[:size]
    more = len(ordered) > size
    return chosen, _token(name_key(name(chosen[-1]))) if more else None


_TOKEN_PREFIX = "p1."


def _token(key: str) -> str:
    return _TOKEN_PREFIX + base64.urlsafe_b64encode(key.encode()).decode().rstrip("=")


def _after(token: str | None) -> str | None:
    if not token:
        return None
    try:
        if not token.startswith(_TOKEN_PREFIX):
            raise ValueError
        text = token.removeprefix(_TOKEN_PREFIX)
        padded = (text + "=" * (-len(text) % 4)).encode()
        return base64.b64decode(padded, altchars=b"-_", validate=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise InvalidParameterError("page_token is not a token this server gave") from None
