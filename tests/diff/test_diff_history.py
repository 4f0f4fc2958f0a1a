from __future__ import annotations

import pytest

from deltaport.diff.base.errors import InvalidBaseVersionError
from deltaport.diff.history.commit_log import Commit, align, commit_hash


def _commit(version: int, ts: int, op: str = "WRITE", **params: str) -> Commit:
    info = {
        "timestamp": ts,
        "operation": op,
        "operationParameters": params,
        "operationMetrics": {"numFiles": "1"},
        "engineInfo": f"writer-{version}-{ts}",
    }
    return Commit(version, ts, info)


def _history(*timestamps: int) -> list[Commit]:
    return [_commit(v, ts) for v, ts in enumerate(timestamps)]


def test_hash_uses_timestamp_operation_parameters_and_metrics_only() -> None:
    a = _commit(3, 100, "WRITE", mode="Append")
    b = Commit(3, 999, {**a.commit_info, "engineInfo": "other", "txnId": "x"})
    assert commit_hash(a) == commit_hash(b)
    assert commit_hash(a) != commit_hash(_commit(3, 101, "WRITE", mode="Append"))
    assert commit_hash(a) != commit_hash(_commit(3, 100, "DELETE", mode="Append"))
    assert commit_hash(a) != commit_hash(_commit(3, 100, "WRITE", mode="Overwrite"))
    c = Commit(3, 100, {**a.commit_info, "operationMetrics": {"numFiles": "2"}})
    assert commit_hash(a) != commit_hash(c)


def test_hash_without_commit_info_uses_the_commit_timestamp() -> None:
    assert commit_hash(Commit(1, 5, {})) == commit_hash(Commit(1, 5, {}))
    assert commit_hash(Commit(1, 5, {})) != commit_hash(Commit(1, 6, {}))


def test_base_is_last_shared_version() -> None:
    left = _history(10, 11, 12, 20, 21)
    right = _history(10, 11, 12, 30)
    result = align(left, right)
    assert result.base_version == 2
    assert result.left_only == (3, 4)
    assert result.right_only == (3,)
    assert result.notes == ()


def test_identical_histories_have_nothing_of_their_own() -> None:
    result = align(_history(1, 2, 3), _history(1, 2, 3))
    assert (result.base_version, result.left_only, result.right_only) == (2, (), ())


def test_one_side_ahead() -> None:
    result = align(_history(1, 2), _history(1, 2, 3, 4))
    assert (result.base_version, result.left_only, result.right_only) == (1, (), (2, 3))


def test_unrelated_histories_have_no_base() -> None:
    result = align(_history(1, 2), _history(5, 6, 7))
    assert result.base_version is None
    assert result.left_only == (0, 1)
    assert result.right_only == (0, 1, 2)
    assert "no common history" in result.notes[0]


def test_cleaned_up_log_starts_from_oldest_shared_version() -> None:
    left = _history(1, 2, 3, 4, 5)
    right = _history(1, 2, 3, 4, 5, 6)[3:]
    result = align(left, right)
    assert result.base_version == 4
    assert result.right_only == (5,)
    assert any("searched from version 3" in n for n in result.notes)


def test_cleaned_up_log_diverging_before_its_start() -> None:
    left = _history(1, 2, 3, 4)
    right = _history(1, 2, 9, 9, 9)[3:]
    result = align(left, right)
    assert result.base_version is None
    assert result.right_only == (3, 4)
    assert any("differ already at version 3" in n for n in result.notes)


def test_logs_sharing_no_version() -> None:
    result = align(_history(1, 2), _history(1, 2, 3, 4, 5)[4:])
    assert result.base_version is None
    assert any("share no version" in n for n in result.notes)


def test_explicit_base_version() -> None:
    left = _history(1, 2, 3, 4)
    right = _history(1, 2, 3, 4, 5)
    result = align(left, right, base_version=1)
    assert result.base_version == 1
    assert result.left_only == (2, 3)
    assert result.right_only == (2, 3, 4)
    assert result.notes == ()


def test_explicit_base_that_differs_is_flagged() -> None:
    result = align(_history(1, 2, 3), _history(1, 9, 3), base_version=1)
    assert any("differ" in n for n in result.notes)


def test_explicit_base_older_than_a_cleaned_log() -> None:
    right = _history(1, 2, 3, 4, 5, 6)[4:]
    result = align(_history(1, 2, 3), right, base_version=1)
    assert result.right_only == (4, 5)
    assert any("no longer holds versions 2 to 3" in n for n in result.notes)


@pytest.mark.parametrize("base", [-1, 3, 7])
def test_explicit_base_outside_histories(base: int) -> None:
    with pytest.raises(InvalidBaseVersionError):
        align(_history(1, 2, 3), _history(1, 2, 3, 4, 5), base_version=base)
