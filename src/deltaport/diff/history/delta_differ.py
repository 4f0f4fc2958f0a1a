"""The Delta table differ: a two-dot diff of two Delta logs from their common version."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import ClassVar

from deltaport.delta import DeltaTable, open_table
from deltaport.delta.errors import TableNotFoundError, VersionNotFoundError
from deltaport.diff.base.errors import InvalidPageTokenError, TablesNotFoundError
from deltaport.diff.base.model import (
    DiffEntry,
    DiffMetrics,
    OperationType,
    SideSummary,
    TableDiff,
    TableDiffType,
)
from deltaport.diff.history.base_search import FoundBase, search_base
from deltaport.diff.history.commit_log import Alignment, Commit, align
from deltaport.diff.history.operations import operation_content, operation_type
from deltaport.diff.history.paging import (
    PageState,
    decode_page_token,
    diff_fingerprint,
    encode_page_token,
)
from deltaport.diff.history.summary import TableState, VersionActions, summarize
from deltaport.storage import Storage, parse_location

DEFAULT_PAGE_SIZE = 1000

_NO_TABLE = TableState(None, None, None)
_BASE_IGNORED = "The base version was ignored: the table exists on one side only."


class DeltaDiffer:
    """Diffs two Delta tables, typically the same table on two branches (two copies)."""

    format_name: ClassVar[str] = "delta"

    def detect(self, location: str, storage_options: Mapping[str, str] | None = None) -> bool:
        """A location is a Delta table when it has a non-empty ``_delta_log/``."""
        storage = Storage(parse_location(location), storage_options)
        return bool(storage.list_dir("_delta_log"))

    def diff(
        self,
        left_uri: str,
        right_uri: str,
        *,
        base_version: int | None = None,
        limit: int = DEFAULT_PAGE_SIZE,
        page_token: str | None = None,
        storage_options: Mapping[str, str] | None = None,
    ) -> TableDiff:
        started = time.perf_counter()
        if limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit}")
        left_loc = parse_location(left_uri)
        right_loc = parse_location(right_uri)
        fingerprint = diff_fingerprint(left_loc.uri, right_loc.uri)
        page = decode_page_token(page_token, fingerprint) if page_token else None
        if page is not None and base_version is not None and base_version != page.base_version:
            raise InvalidPageTokenError("page token was issued for another base version")
        left_head = page.left_head if page else None
        right_head = page.right_head if page else None
        asked = page.base_version if page else base_version
        found = None
        if asked is None:
            found = _search_base(
                left_loc.uri, right_loc.uri, storage_options, left_head, right_head
            )
        start = asked if asked is not None else (found.version if found else None)
        if found is not None:
            _share_base(left_loc.uri, right_loc.uri, storage_options, found.version)
        left, left_history = _load(left_loc.uri, storage_options, left_head, start)
        right, right_history = _load(right_loc.uri, storage_options, right_head, start)
        if left is None and right is None:
            raise TablesNotFoundError(f"no table at {left_loc.uri} nor at {right_loc.uri}")
        if start is not None and (left is None or right is None):
            # created or dropped: the base is ignored and the whole history listed
            left, left_history = _load(left_loc.uri, storage_options, left_head, None)
            right, right_history = _load(right_loc.uri, storage_options, right_head, None)
        run = _DiffRun(left, right, left_history, right_history)
        diff_type, alignment = run.align(start)
        if found is not None:
            alignment = replace(alignment, notes=found.notes + alignment.notes)
        entries, next_version = run.page(diff_type, alignment, limit, page)
        next_token = None
        if next_version is not None:
            state = PageState(
                alignment.base_version,
                left_history[-1].version if left_history else None,
                right_history[-1].version if right_history else None,
                next_version,
            )
            next_token = encode_page_token(state, fingerprint)
        left_summary, right_summary, notes = run.summaries(alignment)
        return TableDiff(
            table_diff_type=diff_type,
            table_format=self.format_name,
            left_uri=left_loc.uri,
            right_uri=right_loc.uri,
            base_version=alignment.base_version,
            left_version=left_history[-1].version if left_history else None,
            right_version=right_history[-1].version if right_history else None,
            results=entries,
            left=left_summary,
            right=right_summary,
            notes=alignment.notes + notes,
            next_page_token=next_token,
            metrics=DiffMetrics(
                log_entries_read=len(left_history) + len(right_history),
                run_time_ms=(time.perf_counter() - started) * 1000,
            ),
        )


class _DiffRun:
    """The state of one diff: both tables (None when missing) and their histories."""

    def __init__(
        self,
        left: DeltaTable | None,
        right: DeltaTable | None,
        left_history: Sequence[Commit],
        right_history: Sequence[Commit],
    ) -> None:
        self.left = left
        self.right = right
        self.left_history = left_history
        self.right_history = right_history

    def align(self, base_version: int | None) -> tuple[TableDiffType, Alignment]:
        ignored = () if base_version is None else (_BASE_IGNORED,)
        if not self.left_history:
            versions = tuple(c.version for c in self.right_history)
            return TableDiffType.CREATED, Alignment(None, (), versions, ignored)
        if not self.right_history:
            versions = tuple(c.version for c in self.left_history)
            return TableDiffType.DROPPED, Alignment(None, versions, (), ignored)
        alignment = align(self.left_history, self.right_history, base_version)
        changed = alignment.left_only or alignment.right_only
        return (TableDiffType.CHANGED if changed else TableDiffType.NONE), alignment

    def page(
        self, diff_type: TableDiffType, alignment: Alignment, limit: int, page: PageState | None
    ) -> tuple[tuple[DiffEntry, ...], int | None]:
        """One page of the listed side's own commits, newest first, and the version the
        next page starts at. A dropped table lists the left history, all others the right."""
        dropped = diff_type == TableDiffType.DROPPED
        history = self.left_history if dropped else self.right_history
        versions = alignment.left_only if dropped else alignment.right_only
        by_version = {c.version: c for c in history}
        newest_first = sorted(versions, reverse=True)
        if page is not None:
            newest_first = [v for v in newest_first if v <= page.next_version]
        entries = tuple(_entry(by_version[v]) for v in newest_first[:limit])
        rest = newest_first[limit:]
        return entries, (rest[0] if rest else None)

    def summaries(
        self, alignment: Alignment
    ) -> tuple[SideSummary | None, SideSummary | None, tuple[str, ...]]:
        notes: list[str] = []
        before = self._base_state(alignment, notes)
        left = right = None
        if self.left is not None:
            left = _summarize(self.left, alignment.left_only, before, "left", notes)
        if self.right is not None:
            right = _summarize(self.right, alignment.right_only, before, "right", notes)
        return left, right, tuple(notes)

    def _base_state(self, alignment: Alignment, notes: list[str]) -> TableState:
        base = alignment.base_version
        if base is None:
            firsts = [h[0].version for h in (self.left_history, self.right_history) if h]
            if any(first > 0 for first in firsts):
                notes.append(
                    "Summaries count from an empty table: the state before the oldest "
                    "commit in the logs is unknown."
                )
            return _NO_TABLE
        for table in (self.left, self.right):
            if table is None:
                continue
            try:
                snapshot = table.snapshot(base)
            except VersionNotFoundError:
                continue
            return TableState(snapshot.metadata, snapshot.protocol, snapshot.files)
        notes.append(
            f"The table at base version {base} cannot be rebuilt from the logs; summaries "
            "count from an empty table."
        )
        return _NO_TABLE


def _search_base(
    left_uri: str,
    right_uri: str,
    storage_options: Mapping[str, str] | None,
    left_head: int | None,
    right_head: int | None,
) -> FoundBase | None:
    """The common base found without reading both logs, when both tables exist and share
    one (else None: the logs are then read whole)."""
    try:
        return search_base(
            open_table(left_uri, storage_options),
            open_table(right_uri, storage_options),
            left_head,
            right_head,
        )
    except (TableNotFoundError, VersionNotFoundError):
        return None


def _share_base(
    left_uri: str, right_uri: str, storage_options: Mapping[str, str] | None, base: int
) -> None:
    """Replay the base snapshot once and give it to both copies: each side's later versions
    are then a few commits on top of it rather than a replay of its own log."""
    left = open_table(left_uri, storage_options)
    try:
        snapshot = left.snapshot(base)
    except VersionNotFoundError:
        return
    open_table(right_uri, storage_options).adopt_snapshot(snapshot)


def _load(
    uri: str, storage_options: Mapping[str, str] | None, head: int | None, start: int | None
) -> tuple[DeltaTable | None, list[Commit]]:
    """The table and its history up to ``head`` (default: latest), from ``start`` (the
    base version) when known, else every commit still in the log; (None, []) if missing."""
    table = open_table(uri, storage_options)
    try:
        first = None
        if start is not None:
            oldest, newest = table.commit_range(head)
            first = min(max(start, oldest), newest)
        entries = table.history(start=first, end=head)
    except TableNotFoundError:
        return None, []
    commits = [Commit(e.version, e.timestamp, e.commit_info) for e in entries]
    commits.sort(key=lambda c: c.version)
    return table, commits


def _summarize(
    table: DeltaTable, versions: Sequence[int], before: TableState, side: str, notes: list[str]
) -> SideSummary:
    if not versions:
        return summarize(versions, (), None, before)
    for start in range(versions[0], versions[-1] + 1):
        try:
            changes = table.changes(start, versions[-1])
        except VersionNotFoundError:
            continue
        if start > versions[0]:
            notes.append(
                f"The {side} summary counts files and rows from version {start}: the log "
                f"can no longer rebuild versions {versions[0]} to {start - 1}."
            )
        actions = [VersionActions(start, changes.protocol, changes.metadata)]
        actions += [VersionActions(v.version, v.protocol, v.metadata) for v in changes.versions]
        return summarize(versions, actions, changes.files, before)
    notes.append(f"The {side} summary is empty: the log can no longer rebuild its versions.")
    return summarize(versions, (), None, before)


def _entry(commit: Commit) -> DiffEntry:
    info = commit.commit_info
    operation = str(info.get("operation") or "UNKNOWN")
    return DiffEntry(
        id=commit.version,
        timestamp=commit.timestamp,
        operation=operation,
        # Version 0 creates the table whatever the writer named it (delta-rs says WRITE).
        operation_type=OperationType.CREATE if commit.version == 0 else operation_type(operation),
        operation_content=operation_content(info),
    )
