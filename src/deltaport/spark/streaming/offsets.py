"""Stream offsets: a position in the table's history, stored as JSON in checkpoints.

``version`` and ``index``: every file before the ``index``-th one of ``version`` has been
read (files of a version are in a fixed order). ``snapshot``: the position is in the
initial snapshot of ``version`` rather than in the changes committed at ``version``.
``mode``: the access mode the files were listed in (``url`` or ``dir``), which fixes their
order within a version; written only for ``dir``, so ``url`` offsets keep their old form.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, order=True)
class Position:
    version: int
    index: int = 0
    snapshot: bool = False
    mode: str = "url"

    def to_offset(self) -> dict[str, Any]:
        offset: dict[str, Any] = {
            "version": self.version,
            "index": self.index,
            "snapshot": self.snapshot,
        }
        if self.mode != "url":
            offset["mode"] = self.mode
        return offset

    @classmethod
    def from_offset(cls, offset: dict[str, Any]) -> Position:
        try:
            mode = str(offset.get("mode", "url"))
            if mode not in ("url", "dir"):
                raise ValueError(mode)
            return cls(int(offset["version"]), int(offset["index"]), bool(offset["snapshot"]), mode)
        except (KeyError, TypeError, ValueError, AttributeError):
            raise ValueError(
                f"the checkpoint holds an offset {offset!r} that is not a deltaSharing offset"
            ) from None

    def next_version(self) -> Position:
        return Position(self.version + 1, mode=self.mode)
