"""Query-string parameters of the sharing routes: typed values or a precise 400."""

from __future__ import annotations

from typing import TypeVar

import msgspec

from deltaport.protocol.echo import echo
from deltaport.protocol.errors import InvalidParameterError, MalformedRequestError

T = TypeVar("T")


def int_param(value: str | None, name: str) -> int | None:
    """An integer parameter; absent or empty is None."""
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise InvalidParameterError(f"{name} must be an integer, got {echo(value)}") from None


def bool_param(value: str | None, name: str) -> bool:
    """A ``true``/``false`` parameter (any case); absent or empty is false."""
    if value is None or value == "":
        return False
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise InvalidParameterError(f"{name} must be true or false, got {echo(value)}")


def json_body(body: bytes, decoder: msgspec.json.Decoder[T], empty: T) -> T:
    """A JSON request body decoded and validated (``empty`` when there is none), or a
    400 ``MALFORMED_REQUEST`` saying what is wrong."""
    if not body.strip():
        return empty
    try:
        return decoder.decode(body)
    except msgspec.ValidationError as exc:
        raise MalformedRequestError(f"invalid request body: {exc}") from None
    except msgspec.DecodeError:
        raise MalformedRequestError("the request body is not valid JSON") from None
    except RecursionError:  # skipping an unknown field recurses into it
        raise MalformedRequestError("the request body is nested too deeply") from None
