"""The frames of a file batch answer."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deltaport.protocol.file_batch import FrameError, frame_head, frames


@given(st.lists(st.tuples(st.sampled_from([200, 403, 404, 413]), st.binary(max_size=300))))
def test_frames_round_trip(parts: list[tuple[int, bytes]]) -> None:
    answer = b"".join(frame_head(status, len(body)) + body for status, body in parts)
    assert [(status, bytes(body)) for status, body in frames(answer)] == parts


@pytest.mark.parametrize(
    "answer",
    [b"200 5\nabc", b"200 5", b"200\n", b"ok 3\nabc", b"200 -1\n", b"200 3 1\nabc", b"\n"],
)
def test_malformed_answers(answer: bytes) -> None:
    with pytest.raises(FrameError):
        list(frames(answer))
