"""The polling helper: returns the first true value, fails by its deadline with the message
and the last value seen, and never waits past it."""

from __future__ import annotations

import itertools
import time

import pytest

from waiting import WaitTimeout, wait_until


def test_the_first_true_value_is_returned() -> None:
    values = iter([0, None, "", "ready", "later"])
    assert wait_until(lambda: next(values), timeout=5, interval=0) == "ready"


def test_a_value_never_true_fails_with_the_message_and_the_last_value() -> None:
    values = itertools.chain([None, 0], itertools.repeat(""))
    started = time.monotonic()
    with pytest.raises(WaitTimeout, match=r"the grant: not within 0.3 s \(last seen: ''\)") as e:
        wait_until(lambda: next(values), timeout=0.3, message="the grant")
    assert time.monotonic() - started < 2
    assert isinstance(e.value, AssertionError)


def test_details_are_asked_for_at_the_deadline_only() -> None:
    logs = iter(["starting", "still starting"])
    assert wait_until(lambda: 1, timeout=5, details=lambda: next(logs)) == 1
    with pytest.raises(WaitTimeout, match=r"last seen: 0\)\nstarting$"):
        wait_until(lambda: 0, timeout=0.2, message="the server", details=lambda: next(logs))


def test_ignored_exceptions_are_retried_and_the_last_one_reported() -> None:
    calls = itertools.count()

    def flaky() -> int:
        if next(calls) < 3:
            raise ConnectionError("refused")
        return 42

    assert wait_until(flaky, timeout=5, interval=0, ignore=(ConnectionError,)) == 42
    with pytest.raises(WaitTimeout, match=r"ConnectionError\('refused'\)"):
        wait_until(_refused, timeout=0.2, ignore=(ConnectionError,))
    with pytest.raises(KeyError):  # not ignored: raised at once
        wait_until(lambda: {}["x"], timeout=5)


def _refused() -> None:
    raise ConnectionError("refused")
