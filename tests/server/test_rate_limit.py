"""Per-recipient token buckets on an injected clock, and the ``rateLimits`` settings."""

from __future__ import annotations

from typing import Any

import pytest

from deltaport.config.loading import parse_config
from deltaport.config.model import ConfigError
from deltaport.protocol.errors import TooManyRequestsError
from deltaport.server.limits import rate_limit
from deltaport.server.limits.rate_limit import Rate, RecipientRateLimits
from deltaport.server.limits.sharing_limits import recipient_rate_limits


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_allows_its_burst_then_refills_at_its_rate() -> None:
    clock = Clock()
    limits = RecipientRateLimits(Rate(2.0, 4), clock=clock)
    for _ in range(4):
        limits.admit("r")
    with pytest.raises(TooManyRequestsError) as refused:
        limits.admit("r")
    assert refused.value.retry_after == 1  # half a second, rounded up to whole seconds
    limits.admit("other")  # every recipient has its own bucket
    clock.now += 0.5
    limits.admit("r")
    with pytest.raises(TooManyRequestsError):
        limits.admit("r")
    clock.now += 3600  # a long pause refills the bucket to its burst, not beyond
    for _ in range(4):
        limits.admit("r")
    with pytest.raises(TooManyRequestsError):
        limits.admit("r")


def test_a_refused_request_takes_nothing_and_retry_after_counts_whole_seconds() -> None:
    clock = Clock()
    limits = RecipientRateLimits(Rate(0.1, 1), clock=clock)
    limits.admit("r")
    for _ in range(50):
        with pytest.raises(TooManyRequestsError) as refused:
            limits.admit("r")
    assert refused.value.retry_after == 10
    clock.now += 10
    limits.admit("r")


def test_overrides_are_by_name_without_case_and_no_default_means_no_limit() -> None:
    limits = RecipientRateLimits(None, {"Greedy": Rate(1.0, 1)}, clock=Clock())
    for _ in range(1000):
        limits.admit("calm")
    limits.admit("GREEDY")
    with pytest.raises(TooManyRequestsError):
        limits.admit("greedy")


def test_the_buckets_kept_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rate_limit, "RECIPIENTS_KEPT", 10)
    limits = RecipientRateLimits(Rate(1.0, 1), clock=Clock())
    for i in range(100):
        limits.admit(f"r{i}")
    assert len(limits._buckets) == 10


def _config(limits: dict[str, Any]) -> Any:
    return parse_config({"rateLimits": limits}, {}).rate_limits


def test_the_settings_build_the_limits() -> None:
    assert _config({}).failed_auth_limit == 100
    assert recipient_rate_limits(_config({}))._default is None
    built = recipient_rate_limits(
        _config({"requestsPerSecond": 2.5, "recipients": {"Big": {"requestsPerSecond": 50}}})
    )
    assert built._default == Rate(2.5, 3)  # burst: one second's requests, rounded up
    assert built._overrides == {"big": Rate(50.0, 50)}


@pytest.mark.parametrize(
    ("limits", "message"),
    [
        ({"requestsPerSecond": 0}, "rateLimits.requestsPerSecond: must be a positive number"),
        ({"requestsPerSecond": 1, "burst": 0}, "rateLimits.burst: must be positive"),
        ({"burst": 5}, "rateLimits.burst: give requestsPerSecond too"),
        ({"failedAuthLimit": 0}, "rateLimits.failedAuthLimit: must be positive"),
        ({"failedAuthWindowSeconds": -1}, "rateLimits.failedAuthWindowSeconds: must be positive"),
        (
            {"recipients": {"a": {"requestsPerSecond": -1}}},
            "rateLimits.recipients.a.requestsPerSecond: must be a positive number",
        ),
        ({"requestsPerSecond": ".nan"}, "rateLimits.requestsPerSecond"),
    ],
)
def test_bad_settings_are_refused(limits: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        _config(limits)
