"""Streaming a table answer whose last line may be an ``endStreamAction``.

The head (protocol and metaData) leaves before any file is signed. When something fails
after the 200 has started (a storage error, a URL that cannot be signed), a client that
can read an ``endStreamAction`` gets one with ``errorMessage`` as the last line; any other
client sees the connection abort mid-body (never a body that merely looks complete).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator

from deltaport.protocol.actions import EndStreamAction, EndStreamLine
from deltaport.protocol.errors import SharingError
from deltaport.server.answers.ndjson import Chunk, chunked, encode_lines

log = logging.getLogger(__name__)

STREAM_FAILED = "the server failed while sending the response; the lines above are incomplete"


def stream_body(
    head: bytes,
    segments: Iterable[Chunk],
    end: EndStreamAction | None,
    table_name: str,
) -> Iterator[Chunk]:
    """Chunks of the encoded ``head``, then ``segments``, then ``end`` (None: no end line)."""

    def parts() -> Iterator[Chunk]:
        yield head
        yield b""  # flush: the head leaves before any file is signed
        try:
            yield from segments
        except Exception as exc:
            log.exception("answer for table %s failed while streaming", table_name)
            if end is None:
                raise
            message = exc.message if isinstance(exc, SharingError) else STREAM_FAILED
            yield encode_lines([EndStreamLine(EndStreamAction(errorMessage=message))])
            return
        if end is not None:
            yield encode_lines([EndStreamLine(end)])

    return chunked(parts())
