"""The differ's Python entry point."""

from __future__ import annotations

from collections.abc import Mapping

from deltaport.diff.base.model import TableDiff
from deltaport.diff.registry import detect_differ, get_differ

DEFAULT_LIMIT = 1000
"""Commits per page unless the caller says."""


def diff_tables(
    left_uri: str,
    right_uri: str,
    base_version: int | None = None,
    limit: int | None = None,
    page_token: str | None = None,
    *,
    table_format: str | None = None,
    storage_options: Mapping[str, str] | None = None,
) -> TableDiff:
    """Two-dot diff ``left..right``: the commits ``right`` has and ``left`` has not.

    The format is detected (a location with ``_delta_log/`` is Delta) unless
    ``table_format`` names it. ``limit`` caps the commits per page (None: 1000); pass the result's
    ``next_page_token`` as ``page_token`` for the next page.
    """
    if table_format is not None:
        differ = get_differ(table_format)
    else:
        differ = detect_differ(left_uri, right_uri, storage_options)
    return differ.diff(
        left_uri,
        right_uri,
        base_version=base_version,
        limit=DEFAULT_LIMIT if limit is None else limit,
        page_token=page_token,
        storage_options=storage_options,
    )
