"""Retrying idempotent HTTP calls: 429, 5xx and connection failures, with exponential
backoff and full jitter, honouring ``Retry-After``, within a bounded total time. Failures
that another attempt cannot mend fail at once: a URL of a scheme HTTP cannot fetch, a
request httpx refuses to send, a server whose TLS certificate is not trusted."""

from __future__ import annotations

import email.utils
import random
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import httpx

from deltaport.client.base.errors import SharingError

T = TypeVar("T")

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    max_attempts: int = 10
    base_delay: float = 0.2
    max_delay: float = 30.0
    total_time: float = 180.0
    """No retry starts after this many seconds since the first attempt."""

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before attempt ``attempt + 1`` (``attempt`` counts from 1)."""
        backoff = random.uniform(0, min(self.max_delay, self.base_delay * 2 ** (attempt - 1)))
        if retry_after is not None:
            return min(max(retry_after, backoff), self.max_delay)
        return backoff


class RetryableResponse(Exception):
    """Raised by a call whose response is worth retrying (429, 5xx)."""

    def __init__(self, response: httpx.Response) -> None:
        super().__init__(f"HTTP {response.status_code}")
        self.response = response


def check_retryable(response: httpx.Response) -> httpx.Response:
    if response.status_code in RETRY_STATUSES:
        raise RetryableResponse(response)
    return response


def retry_after_seconds(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def call_with_retries(
    call: Callable[[], T],
    policy: RetryPolicy,
    what: str,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> T:
    """Run ``call`` until it returns, retrying transport errors and
    ``RetryableResponse``; the last failure becomes a
    [`SharingError`][deltaport.client.SharingError]. ``sleep`` and ``clock``
    (seconds) are the real ones unless a test gives its own."""
    started = clock()
    attempt = 0
    while True:
        attempt += 1
        try:
            return call()
        except RetryableResponse as exc:
            failure: Exception = exc
            retry_after = retry_after_seconds(exc.response)
        except (httpx.UnsupportedProtocol, httpx.LocalProtocolError) as exc:
            raise SharingError(f"{what} failed: {exc}") from exc
        except httpx.TransportError as exc:
            refusal = _certificate_refusal(exc)
            if refusal is not None:
                raise _certificate_error(refusal, what) from exc
            failure = exc
            retry_after = None
        wait = policy.delay(attempt, retry_after)
        out_of_time = clock() - started + wait > policy.total_time
        if attempt >= policy.max_attempts or out_of_time:
            raise _final_error(failure, what, attempt) from failure
        sleep(wait)


def _final_error(failure: Exception, what: str, attempts: int) -> SharingError:
    if isinstance(failure, RetryableResponse):
        error = SharingError.from_response(failure.response)
        error.message = f"{what} failed after {attempts} attempts: {error.message}"
        error.args = (error.message,)
        return error
    return SharingError(f"{what} failed after {attempts} attempts: {failure!r}")


_CAUSES_FOLLOWED = 8


def _certificate_refusal(error: BaseException) -> ssl.SSLCertVerificationError | None:
    """The TLS certificate verification failure that ``error`` stands for (httpx and
    httpcore raise their own errors from it), or None."""
    cause: BaseException | None = error
    for _ in range(_CAUSES_FOLLOWED):
        if cause is None:
            return None
        if isinstance(cause, ssl.SSLCertVerificationError):
            return cause
        cause = cause.__cause__ or cause.__context__
    return None


def _certificate_error(refusal: ssl.SSLCertVerificationError, what: str) -> SharingError:
    detail = refusal.verify_message or refusal.reason or str(refusal)
    return SharingError(
        f"{what} failed: the server's TLS certificate was not accepted ({detail}). A server "
        "whose certificate is self-signed or issued by a private CA needs that certificate "
        "in the trust store: set SSL_CERT_FILE (or SSL_CERT_DIR) to it"
    )
