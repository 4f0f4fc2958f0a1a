"""How hard the server tries an object store before a request fails.

obstore retries 5xx answers, dropped connections and timeouts of reads on its own, but by
default up to 10 times within 3 minutes: a recipient's request would hang that long on a
storage outage. The server bounds it (:data:`MAX_RETRIES` within :data:`RETRY_TIMEOUT`),
so an outage becomes a clean error answer after seconds; the storage options
``max_retries`` and ``retry_timeout`` (seconds) change the bounds, and obstore's own
``timeout`` / ``connect_timeout`` options bound each attempt.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from obstore.store import RetryConfig

MAX_RETRIES = 3
RETRY_TIMEOUT = timedelta(seconds=15)
MAX_BACKOFF = timedelta(seconds=2)
RETRY_KEYS = ("max_retries", "retry_timeout")


class RetryOptionError(ValueError):
    """A retry option is not a number of the right kind."""


def split_retry_options(options: Mapping[str, str]) -> tuple[dict[str, str], RetryConfig]:
    """``options`` without the retry keys (obstore refuses them), and the retry config."""
    rest = {k: v for k, v in options.items() if k.lower() not in RETRY_KEYS}
    given = {k.lower(): v for k, v in options.items() if k.lower() in RETRY_KEYS}
    try:
        retries = int(given.get("max_retries", MAX_RETRIES))
        seconds = float(given.get("retry_timeout", RETRY_TIMEOUT.total_seconds()))
    except ValueError as exc:
        raise RetryOptionError(
            "storage options max_retries (a whole number) and retry_timeout (seconds) "
            f"must be numbers: {exc}"
        ) from None
    if retries < 0 or seconds <= 0:
        raise RetryOptionError("storage option max_retries must be >= 0, retry_timeout > 0")
    timeout = timedelta(seconds=seconds)
    config: RetryConfig = {
        "max_retries": retries,
        "retry_timeout": timeout,
        "backoff": {"init_backoff": timedelta(milliseconds=100), "max_backoff": MAX_BACKOFF},
    }
    return rest, config
