"""Fetching pre-signed URLs: whole data files and deletion-vector byte ranges.

A refused URL (403, or 400/401 once past its expiration time) is reported as
[`UrlExpiredError`][deltaport.client.UrlExpiredError] so the caller can ask the server for fresh
URLs; transient failures (429, 5xx, cut connections) are retried.
"""

from __future__ import annotations

import time

import httpx

from deltaport.client.base.errors import SharingError, UrlExpiredError
from deltaport.client.base.models import RemoteFile
from deltaport.client.files.downloads import Body, Downloads
from deltaport.client.remote.retry import RetryPolicy, call_with_retries, check_retryable
from deltaport.delta.model import DeletionVector
from deltaport.read import RowIndexes, decode_inline, decode_stored, stored_range

EXPIRY_MARGIN_MS = 5_000
"""A URL this close to its expiration time is treated as expired before it is used."""

_EXPIRED_STATUSES = frozenset({400, 401, 403})


def is_expired(file: RemoteFile, now_ms: float | None = None) -> bool:
    if file.expiration_timestamp is None:
        return False
    now = time.time() * 1000 if now_ms is None else now_ms
    return now + EXPIRY_MARGIN_MS >= file.expiration_timestamp


def fetch_url(
    downloads: Downloads,
    url: str,
    policy: RetryPolicy,
    byte_range: tuple[int, int] | None = None,
) -> tuple[bytes, int]:
    """The bytes at ``url`` (or of ``byte_range`` = (offset, length)) and the offset they
    start at: 0 when the server ignored the range and sent everything."""
    range_header = None
    if byte_range is not None:
        offset, length = byte_range
        range_header = f"bytes={offset}-{offset + length - 1}"

    def attempt() -> Body | httpx.Response:
        answer = downloads.get(url, range_header)
        return answer if isinstance(answer, Body) else check_retryable(answer)

    answer = call_with_retries(attempt, policy, "downloading a file")
    if isinstance(answer, httpx.Response):
        if answer.status_code in _EXPIRED_STATUSES:
            error = SharingError.from_response(answer)
            raise UrlExpiredError(
                f"the file URL was refused: {error.message}", status=answer.status_code
            )
        raise _refused(answer)
    start = byte_range[0] if byte_range is not None and answer.status == 206 else 0
    return answer.content, start


def _refused(answer: httpx.Response) -> SharingError:
    """The error of a download refused for good. A sharing server's answer carries its own
    message; an object store's (XML or text naming buckets and keys) is replaced by what it
    means for the read."""
    error = SharingError.from_response(answer)
    if error.error_code is not None:
        return error
    what = f"the storage answered {answer.status_code} {answer.reason_phrase}"
    if answer.status_code == 404:
        what += (
            ": the file is gone (the table was vacuumed or rewritten after the server listed "
            "it); read the table again"
        )
    return SharingError(
        f"downloading a file of the table failed: {what}", status=answer.status_code
    )


def fetch_deletion_vector(
    downloads: Downloads, dv: DeletionVector, policy: RetryPolicy
) -> RowIndexes:
    """Row indexes of a delta-format DV: inline, or stored at a pre-signed URL."""
    if dv.storage_type == "i":
        return decode_inline(dv)
    if dv.storage_type != "p" or not dv.path_or_inline_dv.startswith(("http://", "https://")):
        raise SharingError(
            f"a deletion vector of storage type {dv.storage_type!r} without a URL cannot be "
            "read by a sharing client"
        )
    data, start = fetch_url(downloads, dv.path_or_inline_dv, policy, stored_range(dv))
    return decode_stored(data, dv, data_offset=start)
