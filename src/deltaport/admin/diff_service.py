"""The differ for the admin API and the console: one request type, answers as JSON values.

The commit diff answers :func:`deltaport.diff.to_json` (the lakeFS shape plus the files,
rows and schema changes of each side), exactly what ``deltaport diff --json`` prints; the
row diff answers the lines of ``deltaport diff --rows --json`` as one object. One table at
two versions (``left`` and ``right`` the same, ``left_version`` / ``right_version``
given) lists the commits between the two versions in the same shape.

A side naming a shared table is read through the resolver's provider side, so a version
past its latest is refused as the sharing API refuses it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import anyio
import anyio.to_thread
import msgspec

from deltaport.admin.tables import ConfiguredTables, TableRef
from deltaport.delta import DeltaError, open_table
from deltaport.diff import diff_rows, diff_tables, to_json
from deltaport.diff.base.model import OperationType
from deltaport.diff.history.operations import operation_content, operation_type
from deltaport.protocol.errors import InvalidParameterError, TimedOutError
from deltaport.sharing import TableResolver
from deltaport.storage import StorageError
from deltaport.text.wording import count

MAX_LIMIT = 10_000


@dataclass(frozen=True)
class DiffRequest:
    left: str
    right: str
    base_version: int | None = None
    limit: int | None = None
    page_token: str | None = None
    rows: bool = False
    key: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()
    where: str | None = None
    left_version: int | None = None
    right_version: int | None = None

    @property
    def one_table(self) -> bool:
        """One table at two versions rather than two tables."""
        return self.left.strip() == self.right.strip() and self.right_version is not None


def check(request: DiffRequest) -> None:
    if not request.left.strip() or not request.right.strip():
        raise InvalidParameterError("left and right are both required")
    if request.limit is not None and not 1 <= request.limit <= MAX_LIMIT:
        raise InvalidParameterError(f"limit must be between 1 and {MAX_LIMIT}")
    for name in ("base_version", "left_version", "right_version"):
        value = getattr(request, name)
        if value is not None and value < 0:
            raise InvalidParameterError(f"{name} must not be negative")


CACHED_DIFFS = 32


class DiffService:
    """Answers diffs, keeping the last :data:`CACHED_DIFFS` answers: a page reloaded or
    paged back is answered again without reading both logs, as long as neither table has
    a new version (Delta commits never change once written)."""

    def __init__(
        self,
        tables: ConfiguredTables,
        resolver: TableResolver | None = None,
        timeout_seconds: float = 60,
    ) -> None:
        self.tables = tables
        self.resolver = resolver or TableResolver()
        self.timeout_seconds = timeout_seconds
        self._cache: OrderedDict[tuple[Any, ...], dict[str, Any]] = OrderedDict()
        self._lock = threading.Lock()

    async def within_time(
        self, run: Callable[[DiffRequest], dict[str, Any]], request: DiffRequest
    ) -> dict[str, Any]:
        """``run(request)`` (:meth:`commits` or :meth:`rows`) off the event loop, answered
        with 504 ``REQUEST_TIMEOUT`` when it takes longer than ``timeout_seconds``: a diff
        reads whatever storage its locations name, which may never answer. The abandoned
        read ends in its thread when the store gives up."""
        try:
            with anyio.fail_after(self.timeout_seconds):
                return await anyio.to_thread.run_sync(run, request, abandon_on_cancel=True)
        except TimeoutError:
            raise TimedOutError(
                f"the diff did not finish within {self.timeout_seconds:g} seconds "
                "(admin.diffTimeoutSeconds); its tables' storage may be unreachable or slow"
            ) from None

    def commits(self, request: DiffRequest) -> dict[str, Any]:
        """The commit diff ``left..right`` (or the commits between two versions)."""
        return self._cached("commits", request, self._commits)

    def rows(self, request: DiffRequest) -> dict[str, Any]:
        """The row diff: ``summary``, the page's ``changes`` and ``next_page_token``."""
        return self._cached("rows", request, self._rows)

    def _cached(
        self,
        kind: str,
        request: DiffRequest,
        run: Callable[[DiffRequest, TableRef, TableRef], dict[str, Any]],
    ) -> dict[str, Any]:
        check(request)
        left = self.tables.resolve(request.left, "left")
        right = self.tables.resolve(request.right, "right")
        self._check_version(left, request.left_version)
        self._check_version(right, request.right_version)
        heads = (_head(left), _head(right))
        if None in heads:
            return run(request, left, right)
        key = (kind, request, *heads)
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        answer = run(request, left, right)
        with self._lock:
            self._cache[key] = answer
            while len(self._cache) > CACHED_DIFFS:
                self._cache.popitem(last=False)
        return answer

    def _check_version(self, ref: TableRef, version: int | None) -> None:
        """Refuse a version past the latest of a shared table, as the sharing API does."""
        if version is None or ref.name is None:
            return
        table = self.resolver.provider_table(self.tables.shared, ref.name)
        self.resolver.existing_version(table, version)

    def _commits(self, request: DiffRequest, left: TableRef, right: TableRef) -> dict[str, Any]:
        if request.one_table:
            return self._between_versions(left, request)
        options = _common_options(left, right)
        result = diff_tables(
            left.location,
            right.location,
            base_version=request.base_version,
            limit=request.limit,
            page_token=request.page_token,
            storage_options=options or None,
        )
        return to_json(result)

    def _rows(self, request: DiffRequest, left: TableRef, right: TableRef) -> dict[str, Any]:
        options = _common_options(left, right)
        diff = diff_rows(
            left.location,
            right.location,
            key=list(request.key) or None,
            columns=list(request.columns) or None,
            where=request.where or None,
            left_version=request.left_version,
            right_version=request.right_version,
            limit=100 if request.limit is None else request.limit,
            page_token=request.page_token,
            storage_options=options or None,
        )
        # through msgspec, as the CLI prints it: dates, decimals and bytes as JSON text
        return {
            "summary": _plain(asdict(diff.summary)),
            "changes": [_plain(asdict(c)) for c in diff.page()],
            "next_page_token": diff.next_page_token,
        }

    def _between_versions(self, table: TableRef, request: DiffRequest) -> dict[str, Any]:
        if table.name is None:
            delta = open_table(table.location, table.storage_options or None)
        else:
            delta = self.resolver.delta_table(
                self.resolver.provider_table(self.tables.shared, table.name)
            )
        right = request.right_version
        left = 0 if request.left_version is None else request.left_version
        if right is None or right < left:
            raise InvalidParameterError("right_version must be at least left_version")
        limit = 1000 if request.limit is None else request.limit
        first = max(left + 1, right - limit + 1)
        entries = delta.history(first, right) if first <= right else []
        return {
            "table_diff_type": "changed" if right > left else "none",
            "table_format": "delta",
            "results": [_entry(e.version, e.timestamp, e.commit_info) for e in reversed(entries)],
            "base_version": left,
            "left": {"uri": table.label, "version": left, "summary": None},
            "right": {"uri": table.label, "version": right, "summary": None},
            "notes": [f"{count(right - left, 'commit')} between versions {left} and {right}"]
            + ([f"only the newest {limit} are listed"] if right - left > limit else []),
            "next_page_token": None,
        }


def _head(ref: TableRef) -> int | None:
    """The latest version at ``ref``; None when there is no Delta table there (other
    formats and missing tables are diffed each time, never cached)."""
    try:
        return open_table(ref.location, ref.storage_options or None).latest_version()
    except (DeltaError, StorageError):
        return None


def _entry(version: int, timestamp: int, info: Any) -> dict[str, Any]:
    operation = str(info.get("operation") or "UNKNOWN")
    kind = OperationType.CREATE if version == 0 else operation_type(operation)
    return {
        "id": str(version),
        "timestamp": timestamp,
        "operation": operation,
        "operation_type": kind.value,
        "operation_content": operation_content(info),
    }


def _common_options(left: TableRef, right: TableRef) -> dict[str, str]:
    """The differ takes one set of storage options for both sides."""
    if (
        left.storage_options
        and right.storage_options
        and left.storage_options != right.storage_options
    ):
        raise InvalidParameterError(
            "left and right need different storage options; diff tables on one store"
        )
    return left.storage_options or right.storage_options


def _plain(value: Any) -> Any:
    return msgspec.json.decode(msgspec.json.encode(value))
