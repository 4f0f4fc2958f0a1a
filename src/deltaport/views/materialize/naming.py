"""Deterministic names of output files: the same source file, deletion vector and
binding always give the same name, so a refresh knows which outputs it already has."""

from __future__ import annotations

import hashlib
import json

from deltaport.views.binding import Binding


def _hashed(parts: list[object]) -> str:
    text = json.dumps(parts, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def row_local_name(source_path: str, deletion_vector: str | None, binding: Binding) -> str:
    """The output of one source file (``deletion_vector``: its descriptor's unique id)."""
    return f"part-{_hashed(['file', source_path, deletion_vector, binding.digest])}.parquet"


def whole_name(source_version: int, binding: Binding) -> str:
    """The output of a whole view at one source version."""
    return f"whole-{_hashed(['whole', source_version, binding.digest])}.parquet"
