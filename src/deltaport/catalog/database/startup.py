"""Waiting for the catalog database at start-up: a replica an orchestrator starts while
PostgreSQL is still down (or restarting) tries again, within a bound, rather than dying.

Each failed attempt is one log line; past the bound the start fails with one
:class:`DatabaseUnavailableError` naming the database (never its password). A SQLite file
is there or not, and is not waited for.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from deltaport.catalog.database.connection import (
    Database,
    DatabaseUnavailableError,
    displayed,
    first_line,
)

log = logging.getLogger(__name__)

MAX_DELAY_SECONDS = 5.0
"""The longest pause between two attempts (the first is 1 s, then each twice the last)."""


def wait_for_database(
    url: str,
    seconds: float,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Return once the PostgreSQL database at ``url`` accepts a connection, trying for at
    most ``seconds``; else :class:`DatabaseUnavailableError`."""
    if not url.startswith(("postgresql:", "postgres:")):
        return
    deadline = clock() + seconds
    delay = 1.0
    attempt = 0
    while True:
        attempt += 1
        try:
            Database(url).close()
            return
        except DatabaseUnavailableError as exc:
            reason = first_line(exc.__cause__ or exc)
            left = deadline - clock()
            if left <= 0:
                raise DatabaseUnavailableError(
                    f"the catalog database {displayed(url)} cannot be reached after "
                    f"{attempt} attempts in {seconds:g} s (catalogStartupWaitSeconds): {reason}"
                ) from None
            pause = min(delay, left)
            log.warning(
                "the catalog database %s cannot be reached (attempt %d): %s; "
                "trying again in %.1f s",
                displayed(url),
                attempt,
                reason,
                pause,
            )
            sleep(pause)
            delay = min(delay * 2, MAX_DELAY_SECONDS)
