"""Polling until something becomes true, with a deadline: the one helper for the tests that
wait for a server, a listener or a change to arrive (no bare ``while`` loops of their own)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

_NOTHING = object()


class WaitTimeout(AssertionError):
    """The predicate was not true by the deadline (an ``AssertionError``: a test failure)."""


def wait_until(
    predicate: Callable[[], T],
    timeout: float = 30.0,
    message: str = "the condition",
    interval: float = 0.1,
    ignore: tuple[type[BaseException], ...] = (),
    details: Callable[[], str] | None = None,
) -> T:
    """The first true value ``predicate()`` returns, called every ``interval`` seconds for
    at most ``timeout`` seconds; an exception of ``ignore`` counts as a false value. Fails
    with ``message``, the timeout and the last value seen (or exception raised), then what
    ``details()`` says at that moment (a server's log, what is still missing)."""
    deadline = time.monotonic() + timeout
    last: object = _NOTHING
    while True:
        try:
            value = predicate()
        except ignore as error:
            last = error
        else:
            if value:
                return value
            last = value
        if time.monotonic() >= deadline:
            seen = "nothing" if last is _NOTHING else repr(last)
            said = f"{message}: not within {timeout:g} s (last seen: {seen:.500})"
            raise WaitTimeout(said if details is None else f"{said}\n{details()}")
        time.sleep(interval)
