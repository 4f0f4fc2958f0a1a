"""NDJSON response bodies, encoded with msgspec and sent in chunks of about 100 KB.

Encoding a batch of lines at once and flushing by size keeps the per-line cost low while
the first bytes still leave early.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import msgspec

CHUNK_BYTES = 100_000
CONTENT_TYPE = "application/x-ndjson; charset=utf-8"

Chunk = bytes | memoryview
"""Encoded NDJSON text; views avoid copying text built in Arrow buffers."""

_encoder = msgspec.json.Encoder()


def encode_lines(lines: Sequence[Any]) -> bytes:
    """Each object of ``lines`` as one JSON line."""
    return _encoder.encode_lines(lines)


def encode_wrapped(key: str, values: Sequence[Any]) -> bytes:
    """Each value as the line ``{"<key>": value}``, without building a wrapper per value
    (JSON text never holds a raw newline, so lines can be split and joined as bytes)."""
    if not values:
        return b""
    body = _encoder.encode_lines(values)
    opening = b'{"' + key.encode() + b'":'
    return opening + (b"}\n" + opening).join(body[:-1].split(b"\n")) + b"}\n"


def chunked(segments: Iterable[Chunk], chunk_bytes: int = CHUNK_BYTES) -> Iterator[Chunk]:
    """Join encoded NDJSON segments into chunks of at least ``chunk_bytes`` (except the
    last). An empty segment flushes what is pending, so callers can send early lines now."""
    pending = bytearray()
    for segment in segments:
        if not pending and len(segment) >= chunk_bytes:
            yield segment  # big enough alone: no copy
            continue
        pending += segment
        if pending and (len(pending) >= chunk_bytes or not segment):
            yield bytes(pending)
            pending.clear()
    if pending:
        yield bytes(pending)
