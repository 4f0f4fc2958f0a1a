"""The wire format of file batches, a deltaport extension of the protocol.

A server that sends its own table files names, in the ``Deltaport-File-Batch`` header of
its query and change answers, a URL where a client may ``POST`` ``{"files": [url, ...]}``
(signed file URLs as the answer gave them) and get them all in one answer: for each URL,
in order, the ASCII line ``{status} {length}\\n`` and then ``length`` bytes, the file when
the status is 200, else the JSON error a GET of that URL would have had.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

import msgspec

HEADER = "Deltaport-File-Batch"
MEDIA_TYPE = "application/x-deltaport-file-batch"
MAX_FILES = 1000
"""The most files one batch may name."""
FILE_MAX_BYTES = 16 * 1024 * 1024
"""Bigger files are answered with status 413 in a batch: they are fetched on their own."""
_HEAD_MAX_BYTES = 40


class FrameError(ValueError):
    """A batch answer that does not follow the format."""


def frame_head(status: int, length: int) -> bytes:
    """The line that starts a frame."""
    return b"%d %d\n" % (status, length)


def frames(answer: bytes | memoryview) -> Iterator[tuple[int, memoryview]]:
    """The ``(status, content)`` of each frame of a whole batch answer (views into it)."""
    view = memoryview(answer)
    position = 0
    while position < len(view):
        end = bytes(view[position : position + _HEAD_MAX_BYTES]).find(b"\n")
        if end < 0:
            raise FrameError("a file batch frame does not start with a status line")
        head = bytes(view[position : position + end]).split(b" ")
        if len(head) != 2 or not all(part.isdigit() for part in head):
            raise FrameError(f"a file batch frame starts with {bytes(head[0][:20])!r}")
        status, length = int(head[0]), int(head[1])
        start = position + end + 1
        position = start + length
        if position > len(view):
            raise FrameError("a file batch answer ends inside a frame")
        yield status, view[start:position]


class FileBatchRequest(msgspec.Struct, forbid_unknown_fields=True):
    """Body of ``POST {files path}``."""

    files: Annotated[
        list[str],
        msgspec.Meta(
            description="Signed file URLs as answers gave them.",
            extra_json_schema={"minItems": 1, "maxItems": MAX_FILES},
        ),
    ]
