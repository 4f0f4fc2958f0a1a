"""A one-line progress report on stderr (files and bytes done), redrawn at most a few
times per second.

No progress library is needed: a line redrawn with a carriage return shows as a live
line on a terminal and in a Jupyter notebook's output alike (Jupyter applies the ``\\r``
of a stream). Loaders draw it only when it is wanted (``progress_wanted``) and only
once a load has run longer than a moment (``delay``)."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import TextIO

from deltaport.client.base.models import RemoteFile

_MB = 1024 * 1024
LOAD_DELAY = 1.0
"""Seconds a load runs before its progress line appears: quick loads print nothing."""
PROGRESS_ENV = "DELTAPORT_PROGRESS"
"""``0`` (or ``false``, ``off``, ``no``) turns the loaders' progress line off."""
_OFF = frozenset({"0", "false", "off", "no"})


def progress_wanted(progress: bool | None, stream: TextIO | None = None) -> bool:
    """Whether to draw: ``progress`` if given; by default when ``stream`` (stderr) is a
    terminal or a notebook's output, unless ``DELTAPORT_PROGRESS`` turns it off."""
    if progress is not None:
        return progress
    if os.environ.get(PROGRESS_ENV, "").strip().lower() in _OFF:
        return False
    out = stream or sys.stderr
    return _is_notebook(out) or bool(getattr(out, "isatty", lambda: False)())


def _is_notebook(stream: TextIO) -> bool:
    """An IPython kernel's output stream (a notebook or a Jupyter console)."""
    return type(stream).__module__.startswith("ipykernel")


class ProgressLine:
    def __init__(
        self,
        total_files: int,
        total_bytes: int,
        stream: TextIO | None = None,
        *,
        delay: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total_files = total_files
        self.total_bytes = total_bytes
        self.files = 0
        self.bytes = 0
        self.rows = 0
        self._stream = stream or sys.stderr
        self._clock = clock
        self._started = clock()
        self._delay = delay
        self._drawn = 0.0
        self._shown = False

    def file_done(self, file: RemoteFile, rows: int) -> None:
        self.files += 1
        self.bytes += file.size
        self.rows += rows
        now = self._clock()
        if now - self._started < self._delay:
            return
        if now - self._drawn >= 0.2 or self.files == self.total_files:
            self._drawn = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        self._shown = True
        elapsed = max(now - self._started, 1e-6)
        percent = 100.0 * self.bytes / self.total_bytes if self.total_bytes else 100.0
        self._stream.write(
            f"\r{self.files}/{self.total_files} files  {self.bytes / _MB:,.1f}/"
            f"{self.total_bytes / _MB:,.1f} MB  {percent:5.1f}%  {self.rows:,} rows  "
            f"{self.bytes / _MB / elapsed:,.1f} MB/s"
        )
        self._stream.flush()

    def close(self) -> None:
        """The last state and a line break; nothing for a load quicker than ``delay``."""
        now = self._clock()
        if not self._shown and now - self._started < self._delay:
            return
        self._draw(now)
        self._stream.write("\n")
        self._stream.flush()
