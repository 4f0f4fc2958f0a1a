"""Failed admin authentications are limited per client address: the policy on an injected
clock, then over real HTTP against a real server process."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from admin_support import ADMIN_TOKEN, AdminServer, start_admin_server
from deltaport.protocol.errors import TooManyRequestsError
from deltaport.web import failed_auth as throttle
from deltaport.web.failed_auth import FailedAuthLimit
from sharing_server import stop_server


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_limit_blocks_an_address_until_its_oldest_failure_leaves_the_window() -> None:
    clock = Clock()
    limit = FailedAuthLimit(3, 60, clock)
    for _ in range(3):
        limit.check("10.0.0.1")
        limit.failed("10.0.0.1", "admin token")
        clock.now += 10
    with pytest.raises(TooManyRequestsError) as refused:
        limit.check("10.0.0.1")
    assert refused.value.status == 429
    assert refused.value.retry_after == 30  # the first failure (t=1000) leaves at t=1060
    limit.check("10.0.0.2")  # other addresses are not affected
    clock.now = 1060
    limit.check("10.0.0.1")  # one failure left the window: one more attempt is allowed
    limit.failed("10.0.0.1", "admin token")
    with pytest.raises(TooManyRequestsError):
        limit.check("10.0.0.1")
    clock.now += 3600
    limit.check("10.0.0.1")


def test_nothing_during_a_lockout_extends_it() -> None:
    """The probe's storm on a clock: 100 failures in 0.5 s reach the limit, then 100
    refusals and 100 late failures (requests admitted before the limit whose failure came
    after it, as while a token endpoint reads its body) over the next 2.5 s. The address
    is free again once the oldest failure is a window old: at most the window after the
    failure that reached the limit, as documented."""
    clock = Clock()
    start = clock.now
    limit = FailedAuthLimit(100, 6, clock)
    for i in range(100):
        clock.now = start + i * 0.005
        limit.check("203.0.113.9")
        limit.failed("203.0.113.9", "sharing bearer token")
    reached = clock.now
    for i in range(100):
        clock.now = reached + 0.5 + i * 0.025
        with pytest.raises(TooManyRequestsError):
            limit.check("203.0.113.9")
        limit.failed("203.0.113.9", "sharing bearer token")  # a late failure
    clock.now = start + 6 - 0.001
    with pytest.raises(TooManyRequestsError) as refused:
        limit.check("203.0.113.9")
    assert refused.value.retry_after == 1
    clock.now = start + 6
    limit.check("203.0.113.9")  # the right token passes 6 s after the storm began


def test_the_addresses_tracked_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(throttle, "ADDRESSES_KEPT", 100)
    clock = Clock()
    limit = FailedAuthLimit(2, 60, clock)
    for i in range(1000):
        limit.failed(f"10.0.{i // 256}.{i % 256}", "console login")
    assert len(limit._failures) == 100
    limit.failed("10.0.3.231", "console login")  # the last address seen is still counted
    with pytest.raises(TooManyRequestsError):
        limit.check("10.0.3.231")


def test_failures_are_logged_without_the_token(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    limit = FailedAuthLimit(1, 60, Clock())
    limit.failed("192.0.2.7", "console login")
    with pytest.raises(TooManyRequestsError):
        limit.check("192.0.2.7")
    assert "failed console login from 192.0.2.7 (1 of 1 allowed in 60 s)" in caplog.text
    assert "refused for 192.0.2.7" in caplog.text


def test_a_storm_of_refusals_is_logged_once_per_time_over_the_limit(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A refused attempt costs no log line after the first: a guesser that keeps trying
    would otherwise make the server write a line for each 429, costing more than the 429."""
    caplog.set_level(logging.WARNING)
    clock = Clock()
    limit = FailedAuthLimit(2, 60, clock)
    limit.failed("192.0.2.7", "admin token")
    limit.failed("192.0.2.7", "admin token")
    for _ in range(100):
        with pytest.raises(TooManyRequestsError):
            limit.check("192.0.2.7")
    assert caplog.text.count("refused for 192.0.2.7") == 1
    clock.now += 60  # both failures left the window: allowed again, then over it again
    limit.check("192.0.2.7")
    limit.failed("192.0.2.7", "admin token")
    limit.failed("192.0.2.7", "admin token")
    for _ in range(10):
        with pytest.raises(TooManyRequestsError):
            limit.check("192.0.2.7")
    assert caplog.text.count("refused for 192.0.2.7") == 2


@pytest.fixture(scope="module")
def strict_server(
    admin_tables: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[AdminServer]:
    running = start_admin_server(
        admin_tables,
        tmp_path_factory.mktemp("throttled"),
        failedAuthLimit=5,
        failedAuthWindowSeconds=3600,
    )
    yield running
    stop_server(running.sharing)


def _console_login(client: httpx.Client, token: str) -> httpx.Response:
    client.get("/console/login")
    csrf = client.cookies.get("deltaport_login_csrf")
    return client.post("/console/login", data={"csrf": csrf, "token": token})


def test_wrong_tokens_and_logins_lead_to_429_even_for_the_right_token(
    strict_server: AdminServer,
) -> None:
    wrong = "wrong-admin-token-0123456789"
    with strict_server.api(token=wrong) as api:
        for _ in range(3):
            assert api.get("/api/diff").status_code == 401
    with httpx.Client(base_url=strict_server.admin, timeout=60) as browser:
        for _ in range(2):
            assert _console_login(browser, wrong).status_code == 401
        # five failures from this address: the right token is refused too, for now
        refused = _console_login(browser, ADMIN_TOKEN)
        assert refused.status_code == 429
        assert int(refused.headers["retry-after"]) > 3000
        assert "deltaport_session" not in refused.headers.get("set-cookie", "")
    with strict_server.api() as api:
        response = api.get("/api/diff", params={"left": "x", "right": "y"})
        assert response.status_code == 429
        assert response.json()["errorCode"] == "TOO_MANY_REQUESTS"
        assert 3000 < int(response.headers["retry-after"]) <= 3600
    log = strict_server.sharing.log()
    assert "failed admin token from 127.0.0.1 (1 of 5 allowed in 3600 s)" in log
    assert "failed console login from 127.0.0.1 (5 of 5 allowed in 3600 s)" in log
    assert wrong not in log
    assert ADMIN_TOKEN not in log
