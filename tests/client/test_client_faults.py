"""The client against a fault-injecting server: retries, cut streams, expiring URLs,
pages and refresh tokens, and incomplete or failed answers."""

from __future__ import annotations

import re
import time

import httpx
import pytest
from compare import assert_same_rows, direct_read

from deltaport.client import ResponseError, RetryPolicy, SharingClient, SharingError
from deltaport.client.remote.retry import call_with_retries

FAST_RETRY = RetryPolicy(max_attempts=6, base_delay=0.01, max_delay=0.1, total_time=20)


def client(profile, **kwargs):
    return SharingClient(profile, retry=FAST_RETRY, **kwargs)


def read(profile, table="small_files", **kwargs):
    with client(profile, concurrency=4) as c:
        scan = c.table(f"share1.default.{table}").snapshot(**kwargs)
        return scan.to_arrow(), scan


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504])
def test_rest_bursts_are_retried(proxy, proxy_profile, client_tables, status):
    proxy.faults.statuses = [status] * 3
    got, _ = read(proxy_profile, "parted")
    assert_same_rows(got, direct_read(client_tables["parted"]))
    assert proxy.faults.statuses == []


def test_retry_after_is_honoured(proxy, proxy_profile):
    proxy.faults.statuses = [429]
    proxy.faults.retry_after = "1"
    started = time.monotonic()
    with SharingClient(proxy_profile, retry=RetryPolicy(base_delay=0.01, max_delay=5)) as c:
        assert c.table("share1.default.parted").version() == 2
    assert time.monotonic() - started >= 0.9


def test_retries_stop_with_the_servers_error(proxy, proxy_profile):
    proxy.faults.statuses = [503] * 20
    with client(proxy_profile) as c, pytest.raises(SharingError) as info:
        c.list_shares()
    assert info.value.status == 503
    assert info.value.error_code == "TEMPORARILY_UNAVAILABLE"
    assert "6 attempts" in info.value.message


def test_client_errors_are_not_retried(proxy, proxy_profile):
    with client(proxy_profile) as c, pytest.raises(SharingError) as info:
        c.table("share1.default.missing").version()
    assert info.value.status == 404
    assert len(proxy.record.requests) == 1


def test_download_bursts_are_retried(proxy, proxy_profile, client_tables):
    proxy.faults.download_statuses = [503, 429, 500, 503]
    got, _ = read(proxy_profile)
    assert_same_rows(got, direct_read(client_tables["small_files"]))


def test_query_cut_mid_stream_is_asked_again(proxy, proxy_profile, client_tables):
    proxy.faults.cut_responses = 2
    got, _ = read(proxy_profile)
    assert_same_rows(got, direct_read(client_tables["small_files"]))
    assert sum(1 for r in proxy.record.requests if r[1].endswith("/query")) == 3


def test_download_cut_mid_stream_is_fetched_again(proxy, proxy_profile, client_tables):
    proxy.faults.cut_downloads = 3
    got, _ = read(proxy_profile)
    assert_same_rows(got, direct_read(client_tables["small_files"]))


@pytest.mark.parametrize("fmt", [False, True])
def test_urls_expiring_mid_read_are_refreshed_without_rereading(
    proxy, proxy_profile, client_tables, fmt
):
    proxy.faults.expire_after_downloads = 10
    got, scan = read(proxy_profile, use_delta_format=fmt)
    assert_same_rows(got, direct_read(client_tables["small_files"]))
    assert proxy.record.refused_downloads > 0
    assert scan.url_refreshes >= 1
    # every file was downloaded exactly once: finished files were not read again
    assert len(proxy.record.downloads) == 40
    assert set(proxy.record.downloads.values()) == {1}


def test_deletion_vector_urls_are_refreshed_too(proxy, proxy_profile, client_tables):
    proxy.faults.expire_after_downloads = 1
    got, scan = read(proxy_profile, "dv")
    assert_same_rows(got, direct_read(client_tables["dv"]))
    assert scan.url_refreshes >= 1


def test_pages_are_followed(proxy, proxy_profile, client_tables):
    proxy.faults.page_size = 7
    got, _ = read(proxy_profile, max_files=10)
    assert_same_rows(got, direct_read(client_tables["small_files"]))
    queries = [r for r in proxy.record.requests if r[1].endswith("/query")]
    assert len(queries) == 6  # 40 files in pages of 7
    assert [q[2].get("pageToken") for q in queries] == [None, "7", "14", "21", "28", "35"]
    assert all(q[2]["maxFiles"] == 10 for q in queries)


def test_refresh_uses_the_refresh_token(proxy, proxy_profile, client_tables):
    proxy.faults.page_size = 100
    proxy.faults.refresh_token = True
    proxy.faults.expire_after_downloads = 5
    got, _ = read(proxy_profile)
    assert_same_rows(got, direct_read(client_tables["small_files"]))
    queries = [r[2] for r in proxy.record.requests if r[1].endswith("/query")]
    assert queries[0].get("includeRefreshToken") is True
    assert queries[1]["refreshToken"].startswith("refresh-")
    assert "version" not in queries[1]


def test_missing_end_action_is_an_error(proxy, proxy_profile):
    proxy.faults.page_size = 100
    proxy.faults.drop_end_action = True
    with pytest.raises(ResponseError, match="cut short"):
        read(proxy_profile)


def test_end_action_error_message_is_raised(proxy, proxy_profile):
    proxy.faults.end_error = "the table could not be listed"
    with pytest.raises(ResponseError, match="the table could not be listed"):
        read(proxy_profile)


def test_limit_stops_downloading_early(proxy, proxy_profile):
    got, _ = read(proxy_profile, limit=10)
    assert got.num_rows == 10
    assert sum(proxy.record.downloads.values()) < 40


def test_pages_of_the_real_server_are_followed(proxy, proxy_profile, client_tables):
    got, _ = read(proxy_profile, max_files=9)
    assert_same_rows(got, direct_read(client_tables["small_files"]))
    queries = [r[2] for r in proxy.record.requests if r[1].endswith("/query")]
    assert len(queries) == 5  # 40 files in pages of 9
    assert all(q["maxFiles"] == 9 for q in queries)
    assert [q.get("pageToken") is None for q in queries] == [True] + [False] * 4


def test_refresh_token_of_the_real_server_is_used(proxy, proxy_profile, client_tables):
    proxy.faults.expire_after_downloads = 5
    got, scan = read(proxy_profile)
    assert_same_rows(got, direct_read(client_tables["small_files"]))
    assert scan.url_refreshes >= 1
    queries = [r[2] for r in proxy.record.requests if r[1].endswith("/query")]
    assert "refreshToken" not in queries[0]
    assert queries[1].get("refreshToken")
    assert set(proxy.record.downloads.values()) == {1}


def _failing(failures: list[Exception]):
    """A call raising ``failures`` one by one, then answering; it counts its calls."""
    calls = []

    def call():
        calls.append(1)
        if len(calls) <= len(failures):
            raise failures[len(calls) - 1]
        return "done"

    return call, calls


@pytest.mark.parametrize(
    "failure",
    [
        httpx.UnsupportedProtocol("Request URL has an unsupported protocol 's3://'."),
        httpx.LocalProtocolError("Illegal header value"),
    ],
)
def test_failures_another_attempt_cannot_mend_are_not_retried(failure):
    call, calls = _failing([failure])
    sleeps = []
    with pytest.raises(SharingError, match=re.escape(str(failure))) as info:
        call_with_retries(call, FAST_RETRY, "downloading a file", sleep=sleeps.append)
    assert info.value.__cause__ is failure
    assert len(calls) == 1 and sleeps == []


def test_connection_failures_are_still_retried():
    call, calls = _failing([httpx.ConnectError("refused"), httpx.ReadError("reset")])
    sleeps = []
    assert call_with_retries(call, FAST_RETRY, "downloading a file", sleep=sleeps.append) == "done"
    assert len(calls) == 3 and len(sleeps) == 2
