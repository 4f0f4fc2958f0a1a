"""The server's bounds on obstore's retries, from the storage options."""

from __future__ import annotations

from datetime import timedelta

import pytest

from deltaport.storage import Storage, StorageError, parse_location
from deltaport.storage.retry import MAX_RETRIES, RETRY_TIMEOUT, split_retry_options


def test_bounds_by_default_and_from_the_options() -> None:
    rest, retry = split_retry_options({"aws_region": "eu-west-1"})
    assert rest == {"aws_region": "eu-west-1"}
    assert (retry["max_retries"], retry["retry_timeout"]) == (MAX_RETRIES, RETRY_TIMEOUT)
    rest, retry = split_retry_options({"MAX_RETRIES": "0", "retry_timeout": "2.5", "timeout": "1s"})
    assert rest == {"timeout": "1s"}  # obstore's own per-attempt timeout stays
    assert (retry["max_retries"], retry["retry_timeout"]) == (0, timedelta(seconds=2.5))


@pytest.mark.parametrize(
    "options", [{"max_retries": "many"}, {"max_retries": "-1"}, {"retry_timeout": "0"}]
)
def test_bad_bounds_are_a_storage_error(options: dict[str, str]) -> None:
    storage = Storage("s3://bucket/t", {"aws_region": "us-east-1", **options})
    with pytest.raises(StorageError, match="max_retries"):
        storage.object_store(parse_location("s3://bucket/t/x"))
