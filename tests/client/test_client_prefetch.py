"""The ordered, bounded parallel map under scans, and the retry policy's waits."""

from __future__ import annotations

import threading
import time

import httpx
import pytest

from deltaport.client import RetryPolicy, SharingError, ordered_map
from deltaport.client.remote.retry import RetryableResponse, call_with_retries, retry_after_seconds


def test_results_keep_input_order():
    def slow_first(i: int) -> int:
        time.sleep(0.05 if i % 3 == 0 else 0)
        return i * 10

    assert list(ordered_map(slow_first, range(20), workers=4, window=6)) == [
        i * 10 for i in range(20)
    ]


def test_at_most_window_items_run_ahead_of_the_consumer():
    started: list[int] = []
    lock = threading.Lock()

    def work(i: int) -> int:
        with lock:
            started.append(i)
        return i

    results = ordered_map(work, range(100), workers=2, window=5)
    assert next(results) == 0
    time.sleep(0.1)
    assert len(started) <= 6
    results.close()  # stopping early: nothing more is started
    time.sleep(0.1)
    assert len(started) <= 6


def test_errors_reach_the_consumer():
    def fail_on_three(i: int) -> int:
        if i == 3:
            raise ValueError("three")
        return i

    got = []
    with pytest.raises(ValueError, match="three"):
        for value in ordered_map(fail_on_three, range(10), workers=3, window=4):
            got.append(value)
    assert got == [0, 1, 2]


def _response(status: int, retry_after: str | None = None) -> httpx.Response:
    headers = {"Retry-After": retry_after} if retry_after else {}
    return httpx.Response(status, headers=headers, json={"errorCode": "X", "message": "busy"})


def test_retry_after_forms():
    assert retry_after_seconds(_response(429, "3")) == 3.0
    assert retry_after_seconds(_response(429)) is None
    date = retry_after_seconds(_response(503, "Wed, 21 Oct 2015 07:28:00 GMT"))
    assert date == 0.0  # a date in the past: retry now


def test_backoff_grows_and_is_capped():
    policy = RetryPolicy(base_delay=1.0, max_delay=4.0)
    for attempt, cap in [(1, 1.0), (2, 2.0), (3, 4.0), (6, 4.0)]:
        assert all(0 <= policy.delay(attempt, None) <= cap for _ in range(50))
    assert policy.delay(1, 3.0) >= 3.0
    assert policy.delay(1, 60.0) == 4.0


def test_retries_are_bounded_by_total_time():
    now = [100.0]
    sleeps: list[float] = []
    calls = 0

    def always_busy() -> None:
        nonlocal calls
        calls += 1
        now[0] += 0.01  # each answer takes 10 ms
        raise RetryableResponse(_response(503, "0.2"))

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        now[0] += seconds

    policy = RetryPolicy(max_attempts=100, base_delay=0.01, max_delay=5, total_time=0.5)
    with pytest.raises(SharingError) as info:
        call_with_retries(always_busy, policy, "GET /x", sleep=sleep, clock=lambda: now[0])
    assert info.value.status == 503 and "3 attempts" in info.value.message
    # 0.01 + 0.2 + 0.01 + 0.2 + 0.01 = 0.43 s: a third wait would end at 0.63 s, past 0.5 s
    assert calls == 3 and sleeps == [0.2, 0.2]
