"""A one-line progress report on stderr (files and bytes done), redrawn at most a few
times per second."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from deltaport.client.base.models import RemoteFile

_MB = 1024 * 1024


class ProgressLine:
    def __init__(self, total_files: int, total_bytes: int, stream: TextIO | None = None) -> None:
        self.total_files = total_files
        self.total_bytes = total_bytes
        self.files = 0
        self.bytes = 0
        self.rows = 0
        self._stream = stream or sys.stderr
        self._started = time.monotonic()
        self._drawn = 0.0

    def file_done(self, file: RemoteFile, rows: int) -> None:
        self.files += 1
        self.bytes += file.size
        self.rows += rows
        now = time.monotonic()
        if now - self._drawn >= 0.2 or self.files == self.total_files:
            self._drawn = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        elapsed = max(now - self._started, 1e-6)
        percent = 100.0 * self.bytes / self.total_bytes if self.total_bytes else 100.0
        self._stream.write(
            f"\r{self.files}/{self.total_files} files  {self.bytes / _MB:,.1f}/"
            f"{self.total_bytes / _MB:,.1f} MB  {percent:5.1f}%  {self.rows:,} rows  "
            f"{self.bytes / _MB / elapsed:,.1f} MB/s"
        )
        self._stream.flush()

    def close(self) -> None:
        self._draw(time.monotonic())
        self._stream.write("\n")
        self._stream.flush()
