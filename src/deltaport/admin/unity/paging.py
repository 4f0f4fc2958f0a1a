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
    size, after = page_request(params)
    ordered = sorted(items, key=lambda item: name_key(name(item)))
    if after is not None:
        ordered = [item for item in ordered if name_key(name(item)) > after]
    return ordered[:size], next_page_token([name(item) for item in ordered[: size + 1]], size)


def page_request(params: QueryParams) -> tuple[int, str | None]:
    """The page size ``params`` ask for and the name key the page starts after (None: from
    the first); a query for the page reads one more than the size, for
    :func:`next_page_token`."""
    size = int_param(params.get("max_results"), "max_results") or 0
    if size < 0:
        raise InvalidParameterError(f"max_results must be 0 or more, got {size}")
    return min(size or DEFAULT_PAGE, MAX_PAGE), _after(params.get("page_token"))


def next_page_token(names: Sequence[str], size: int) -> str | None:
    """The token of the page after the first ``size`` of ``names`` (read one past the
    page), or None when nothing follows."""
    return page_token(names[size - 1]) if len(names) > size else None


_TOKEN_PREFIX = "p1."


def page_token(name: str) -> str:
    """The token of the page that starts after ``name``."""
    key = name_key(name)
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
