"""The row diff: which rows turn ``left`` into ``right``, matched by key or as whole rows.

[`diff_rows`][deltaport.diff.diff_rows] is the Python entry point of ``deltaport diff --rows``. It
finds what each side must read (``deltaport.diff.rows.row_sources``), which columns are compared
(``deltaport.diff.rows.row_schema``), and hands both to an engine: Arrow on this machine
(``deltaport.diff.rows.arrow_engine``), or Spark through
[`deltaport.spark.diff_rows`][deltaport.spark.diff_rows] for tables past one machine.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
import pyarrow as pa
import pyarrow.compute as pc

from deltaport.diff.base.errors import DiffError, InvalidPageTokenError
from deltaport.diff.rows.arrow_engine import DEFAULT_MEMORY_BUDGET, RowDiffJob
from deltaport.diff.rows.row_compare import DELETED, INSERTED, UPDATED
from deltaport.diff.rows.row_engines import RowEngine, row_engine
from deltaport.diff.rows.row_reading import side_schema
from deltaport.diff.rows.row_schema import ColumnTypeChange, compared_schema
from deltaport.diff.rows.row_sources import RowDiffInput, row_diff_input
from deltaport.protocol.predicates import Expr, PredicateError, parse_sql_predicate

DEFAULT_ROW_LIMIT = 100


@dataclass(frozen=True)
class RowDiffSummary:
    """Counts and context of a row diff (the first line of its JSON output)."""

    inserted: int
    deleted: int
    updated: int
    left_version: int
    right_version: int
    base_version: int | None
    full_comparison: bool
    key: tuple[str, ...]
    compared_columns: tuple[str, ...]
    columns_only_left: tuple[str, ...]
    columns_only_right: tuple[str, ...]
    type_changes: tuple[ColumnTypeChange, ...]
    files_read_left: int
    files_read_right: int
    engine: str
    ranges: int
    notes: tuple[str, ...]


@dataclass(frozen=True)
class RowChange:
    """One changed row: ``key`` is None when rows are compared whole."""

    change: str
    key: dict[str, Any] | None
    left: dict[str, Any] | None
    right: dict[str, Any] | None
    changed: list[str]


@dataclass(frozen=True)
class RowDiff:
    """A row diff: its summary, every change (an Arrow table, see ``change_schema``),
    and the page of them asked for with the token of the next page."""

    summary: RowDiffSummary
    changes: pa.Table
    offset: int
    limit: int
    next_page_token: str | None

    def page(self) -> list[RowChange]:
        """The changes of this page as Python values."""
        rows = self.changes.slice(self.offset, self.limit).to_pylist()
        return [RowChange(r["change"], r["key"], r["left"], r["right"], r["changed"]) for r in rows]


def diff_rows(
    left_uri: str,
    right_uri: str,
    *,
    key: Sequence[str] | None = None,
    columns: Sequence[str] | None = None,
    where: str | None = None,
    left_version: int | None = None,
    right_version: int | None = None,
    limit: int = DEFAULT_ROW_LIMIT,
    page_token: str | None = None,
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
    engine: str | RowEngine = "arrow",
    storage_options: Mapping[str, str] | None = None,
) -> RowDiff:
    """The rows inserted, deleted and updated from ``left`` to ``right`` (two tables, or
    the same table at two versions), compared by ``key`` or, without one, as whole rows.

    ``columns`` limits the compared columns (the key is always compared), ``where`` is a
    SQL predicate as in the sharing server's hints. Only the files that differ since the
    tables' common version are read. ``limit`` changes are on a page; pass
    ``next_page_token`` back as ``page_token`` for the next. ``engine`` compares the rows:
    ``"arrow"`` on this machine within ``memory_budget`` bytes, ``"spark"`` on the active
    SparkSession (``pip install deltaport[spark]``).
    """
    if limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    _named_once(key, "key")
    _named_once(columns, "columns")
    fingerprint = _fingerprint(left_uri, right_uri, key, columns, where)
    offset = 0
    if page_token is not None:
        offset, left_version, right_version = _open_token(page_token, fingerprint)
    job = row_diff_job(
        left_uri,
        right_uri,
        key=key,
        columns=columns,
        where=where,
        left_version=left_version,
        right_version=right_version,
        memory_budget=memory_budget,
        storage_options=storage_options,
    )
    runner = row_engine(engine) if isinstance(engine, str) else engine
    result = runner.compare(job)
    summary = summarize(job, result.changes, runner.name, result.ranges)
    end = offset + limit
    token = None
    if end < result.changes.num_rows:
        token = _seal_token(end, summary.left_version, summary.right_version, fingerprint)
    return RowDiff(summary, result.changes, offset, limit, token)


def row_diff_job(
    left_uri: str,
    right_uri: str,
    *,
    key: Sequence[str] | None = None,
    columns: Sequence[str] | None = None,
    where: str | None = None,
    left_version: int | None = None,
    right_version: int | None = None,
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
    storage_options: Mapping[str, str] | None = None,
) -> RowDiffJob:
    """What a row diff of ``left`` and ``right`` compares (see
    [`diff_rows`][deltaport.diff.diff_rows])."""
    sides = row_diff_input(
        left_uri,
        right_uri,
        left_version=left_version,
        right_version=right_version,
        where=_where(where),
        storage_options=storage_options,
    )
    return prepare_job(sides, key, columns, where, memory_budget)


def prepare_job(
    sides: RowDiffInput,
    key: Sequence[str] | None,
    columns: Sequence[str] | None,
    where: str | None,
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
) -> RowDiffJob:
    """The job an engine runs for ``sides`` (shared by the Arrow and Spark engines)."""
    schema = compared_schema(side_schema(sides.left), side_schema(sides.right), key, columns)
    return RowDiffJob(sides, schema, _where(where), memory_budget)


def summarize(job: RowDiffJob, changes: pa.Table, engine: str, ranges: int) -> RowDiffSummary:
    kinds = pc.value_counts(changes.column("change")).to_pylist() if changes.num_rows else []
    return summary_of_counts(job, {k["values"]: k["counts"] for k in kinds}, engine, ranges)


def summary_of_counts(
    job: RowDiffJob, counts: Mapping[str, int], engine: str, ranges: int
) -> RowDiffSummary:
    """The summary of ``job`` with ``counts`` changes of each kind (``inserted``...)."""
    sides, schema = job.sides, job.schema
    return RowDiffSummary(
        inserted=counts.get(INSERTED, 0),
        deleted=counts.get(DELETED, 0),
        updated=counts.get(UPDATED, 0),
        left_version=sides.left.version,
        right_version=sides.right.version,
        base_version=sides.base_version,
        full_comparison=sides.full_comparison,
        key=schema.key,
        compared_columns=schema.columns,
        columns_only_left=schema.only_left,
        columns_only_right=schema.only_right,
        type_changes=schema.type_changes,
        files_read_left=sides.left.files.num_rows,
        files_read_right=sides.right.files.num_rows,
        engine=engine,
        ranges=ranges,
        notes=sides.notes,
    )


def _where(where: str | None) -> Expr | None:
    if where is None:
        return None
    try:
        return parse_sql_predicate(where)
    except PredicateError as exc:
        raise DiffError(f"--where: {exc}") from None


class _Token(msgspec.Struct, forbid_unknown_fields=True):
    fingerprint: str
    offset: int
    left_version: int
    right_version: int


def _fingerprint(*parts: object) -> str:
    return hashlib.sha256(msgspec.json.encode(parts)).hexdigest()[:16]


def _seal_token(offset: int, left_version: int, right_version: int, fingerprint: str) -> str:
    payload = msgspec.json.encode(_Token(fingerprint, offset, left_version, right_version))
    return base64.urlsafe_b64encode(payload).decode().rstrip("=")


def _open_token(token: str, fingerprint: str) -> tuple[int, int, int]:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        decoded = msgspec.json.decode(raw, type=_Token)
    except (binascii.Error, ValueError, msgspec.DecodeError, msgspec.ValidationError):
        raise InvalidPageTokenError("the page token is not valid") from None
    if decoded.fingerprint != fingerprint:
        raise InvalidPageTokenError("the page token belongs to another row diff")
    return decoded.offset, decoded.left_version, decoded.right_version


def _named_once(names: Sequence[str] | None, what: str) -> None:
    """Refuse a column named twice in ``key`` or ``columns`` (names are case-insensitive)."""
    seen: set[str] = set()
    for name in names or ():
        if name.casefold() in seen:
            raise ValueError(f"{what} names the column {name[:80]!r} more than once")
        seen.add(name.casefold())
