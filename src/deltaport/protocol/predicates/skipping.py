"""File skipping: which files of a table may hold rows matching a predicate.

Every node is evaluated, for all files at once, to two masks: *may be true* (some row of
the file may make it TRUE) and *may be false* (some row may make it FALSE). A row whose
value is NULL makes a comparison neither. ``not`` swaps the two masks, which is what
keeps negation sound over min/max ranges; ``and``/``or`` combine them conservatively.
Anything that cannot be decided (no stats, unknown column, incomparable types, values
that do not parse) is *both*, so a file is dropped only when no row can match.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TypeAlias

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from deltaport.protocol.predicates.domains import (
    Domain,
    compare_literals,
    domain_of_type,
    resolve_domain,
    strings_to_domain,
)
from deltaport.protocol.predicates.stats import ColumnStats, FileStats, Path
from deltaport.protocol.predicates.tree import (
    And,
    Column,
    Comparison,
    ComparisonOp,
    Expr,
    IsNull,
    Literal,
    Not,
    Or,
    referenced_columns,
)

Mask: TypeAlias = npt.NDArray[np.bool_]

_STRING_STATS_PREFIX = 32
"""Writers truncate string stats to a prefix of this many characters: a max this long
may be below the real maximum, so it is not used as an upper bound."""
_TIMESTAMP_STATS_SLACK_US = 999
"""Timestamp stats are truncated to milliseconds: the real max may be 999 us later."""

_STATS_LEAF_TYPES: dict[str, pa.DataType] = {
    "int": pa.int64(),
    "float": pa.float64(),
    "string": pa.string(),
    "date": pa.string(),
    "timestamp": pa.string(),
    "timestamp_ntz": pa.string(),
    "bool": pa.bool_(),
}


@dataclass(frozen=True)
class _Outcome:
    may_true: Mask
    may_false: Mask


def file_mask(
    expr: Expr,
    files: pa.Table | pa.RecordBatch,
    column_types: Mapping[str, str],
    partition_columns: Collection[str],
    physical_names: Mapping[str, str] | None = None,
) -> pa.BooleanArray:
    """Mask of the files that may hold rows matching ``expr`` (``False`` = provably none).

    ``files`` has the ``partition_values`` (map<string, string>) and ``stats`` (JSON text)
    columns of the Delta file tables. ``column_types`` maps each column name (dotted for
    nested fields) to its Delta type name (``"integer"``, ``"decimal(10,2)"``, ...);
    ``physical_names`` maps a column name to its physical name (dotted for nested fields)
    when the table uses column mapping. Never raises for a valid ``expr``.
    """
    context = _Context(
        files,
        column_types,
        frozenset(partition_columns),
        physical_names or {},
        referenced_columns(expr),
    )
    return pa.array(context.evaluate(expr).may_true, pa.bool_())


class _Context:
    def __init__(
        self,
        files: pa.Table | pa.RecordBatch,
        column_types: Mapping[str, str],
        partition_columns: frozenset[str],
        physical_names: Mapping[str, str],
        columns: list[Column],
    ) -> None:
        self.length = files.num_rows
        self.files = files
        self.column_types = column_types
        self.partition_columns = partition_columns
        self.physical_names = physical_names
        self._stats: FileStats | None = None
        self._stats_leaves = self._stats_leaf_types(columns)

    def _stats_leaf_types(self, columns: list[Column]) -> dict[Path, pa.DataType | None]:
        leaves: dict[Path, pa.DataType | None] = {}
        for column in columns:
            if column.name in self.partition_columns or column.name not in self.column_types:
                continue
            domain = domain_of_type(self.column_types[column.name])
            leaf = None
            if domain is not None:
                leaf = (
                    domain.arrow_type
                    if domain.kind == "decimal"
                    else _STATS_LEAF_TYPES[domain.kind]
                )
            leaves[self.stats_path(column.name)] = leaf
        return leaves

    def stats_path(self, name: str) -> Path:
        return tuple(self.physical_names.get(name, name).split("."))

    @property
    def stats(self) -> FileStats:
        if self._stats is None:
            stats = self.files.column("stats")
            if isinstance(stats, pa.ChunkedArray):
                stats = stats.combine_chunks()
            self._stats = FileStats(stats, self._stats_leaves)
        return self._stats

    def constant(self, may_true: bool, may_false: bool) -> _Outcome:
        return _Outcome(np.full(self.length, may_true), np.full(self.length, may_false))

    def unknown(self) -> _Outcome:
        return self.constant(True, True)

    def evaluate(self, expr: Expr) -> _Outcome:
        match expr:
            case Not(child=child):
                inner = self.evaluate(child)
                return _Outcome(inner.may_false, inner.may_true)
            case And(children=children):
                parts = [self.evaluate(c) for c in children]
                return _Outcome(
                    np.logical_and.reduce([p.may_true for p in parts]),
                    np.logical_or.reduce([p.may_false for p in parts]),
                )
            case Or(children=children):
                parts = [self.evaluate(c) for c in children]
                return _Outcome(
                    np.logical_or.reduce([p.may_true for p in parts]),
                    np.logical_and.reduce([p.may_false for p in parts]),
                )
        try:
            return self._evaluate_leaf(expr)
        except (pa.ArrowException, ValueError, TypeError, OverflowError):
            return self.unknown()

    def _evaluate_leaf(self, expr: Expr) -> _Outcome:
        match expr:
            case Literal(value=bool() as value):
                return self.constant(value, not value)
            case Column():
                return self._boolean_column(expr)
            case IsNull(child=Literal()):
                return self.constant(False, True)
            case IsNull(child=Column() as column):
                return self._is_null(column)
            case Comparison(left=Column() as column, right=Literal() as literal):
                return self._compare(expr.op, column, literal)
            case Comparison(left=Literal() as left, right=Literal() as right):
                holds = compare_literals(expr.op, left, right)
                return self.constant(holds, not holds)
            case Comparison(left=Literal(), right=Column()):
                mirrored = expr.mirrored()
                assert isinstance(mirrored.left, Column) and isinstance(mirrored.right, Literal)
                return self._compare(mirrored.op, mirrored.left, mirrored.right)
        return self.unknown()

    def _is_null(self, column: Column) -> _Outcome:
        if column.name in self.partition_columns:
            is_null = self._partition_nulls(column.name)
            return _Outcome(is_null, ~is_null)
        if column.name not in self.column_types:
            return self.unknown()
        stats = self.stats.column(self.stats_path(column.name))
        null_count, num_records = stats.null_count, self.stats.num_records
        some_null = pc.fill_null(pc.greater(null_count, 0), True)
        some_value = pc.fill_null(pc.less(null_count, num_records), True)
        return _Outcome(_np(some_null), _np(some_value))

    def _boolean_column(self, column: Column) -> _Outcome:
        return self._compare("equal", column, Literal(True, "bool"))

    def _compare(self, op: ComparisonOp, column: Column, literal: Literal) -> _Outcome:
        type_name = self.column_types.get(column.name)
        if type_name is None:
            return self.unknown()
        domain, value = resolve_domain(type_name, column, literal)
        if column.name in self.partition_columns:
            return self._compare_partition(op, column.name, domain, value)
        return self._compare_stats(op, column.name, domain, value)

    def _partition_strings(self, name: str) -> pa.Array:
        values = self.files.column("partition_values")
        if isinstance(values, pa.ChunkedArray):
            values = values.combine_chunks()
        key = self.physical_names.get(name, name)
        found = pc.map_lookup(values, pa.scalar(key), "first")
        return pc.if_else(pc.equal(found, ""), pa.scalar(None, pa.string()), found)

    def _partition_nulls(self, name: str) -> Mask:
        return _np(pc.is_null(self._partition_strings(name)))

    def _compare_partition(
        self, op: ComparisonOp, name: str, domain: Domain, value: pa.Scalar
    ) -> _Outcome:
        strings = self._partition_strings(name)
        parsed = strings_to_domain(strings, domain)
        is_null = _np(pc.is_null(strings))
        unparsable = _np(pc.is_null(parsed)) & ~is_null
        holds = _np(pc.fill_null(_COMPARE[op](parsed, value), False))
        return _Outcome((holds & ~is_null) | unparsable, (~holds & ~is_null) | unparsable)

    def _compare_stats(
        self, op: ComparisonOp, name: str, domain: Domain, value: pa.Scalar
    ) -> _Outcome:
        stats = self.stats.column(self.stats_path(name))
        low, high = _bounds(stats, domain)
        none_valued = _np(pc.fill_null(pc.equal(stats.null_count, self.stats.num_records), False))

        def maybe(array: pa.Array) -> Mask:
            return _np(pc.fill_null(array, True)) & ~none_valued

        match op:
            case "equal":
                may_true = maybe(pc.less_equal(low, value)) & maybe(pc.greater_equal(high, value))
                may_false = maybe(pc.not_equal(low, value)) | maybe(pc.not_equal(high, value))
            case "lessThan":
                may_true, may_false = (
                    maybe(pc.less(low, value)),
                    maybe(pc.greater_equal(high, value)),
                )
            case "lessThanOrEqual":
                may_true, may_false = (
                    maybe(pc.less_equal(low, value)),
                    maybe(pc.greater(high, value)),
                )
            case "greaterThan":
                may_true, may_false = (
                    maybe(pc.greater(high, value)),
                    maybe(pc.less_equal(low, value)),
                )
            case "greaterThanOrEqual":
                may_true, may_false = (
                    maybe(pc.greater_equal(high, value)),
                    maybe(pc.less(low, value)),
                )
        if domain.kind == "float":
            may_false = ~none_valued
        return _Outcome(may_true, may_false)


def _bounds(stats: ColumnStats, domain: Domain) -> tuple[pa.Array, pa.Array]:
    """Lower and upper bounds of the column's values per file, in ``domain`` (null where
    unknown)."""
    low, high = stats.min, stats.max
    if domain.kind in ("date", "timestamp", "timestamp_ntz"):
        low, high = strings_to_domain(low, domain), strings_to_domain(high, domain)
        if domain.kind != "date":
            slack = pa.scalar(_TIMESTAMP_STATS_SLACK_US, pa.duration("us"))
            high = pc.add(high, slack)
    elif domain.kind == "string":
        too_long = pc.greater_equal(pc.utf8_length(high), _STRING_STATS_PREFIX)
        high = pc.if_else(too_long, pa.scalar(None, pa.string()), high)
    elif domain.kind == "float":
        low, high = _float_bound(low, domain), _float_bound(high, domain)
    elif domain.kind == "int":
        low, high = low.cast(pa.int64()), high.cast(pa.int64())
    return low, high


def _float_bound(values: pa.Array, domain: Domain) -> pa.Array:
    values = values.cast(pa.float64())
    if domain.single_precision:
        values = pc.cast(pc.cast(values, pa.float32(), safe=False), pa.float64())
    return pc.if_else(pc.is_nan(values), pa.scalar(None, pa.float64()), values)


def _np(array: pa.Array) -> Mask:
    return np.asarray(array.to_numpy(zero_copy_only=False), dtype=np.bool_)


_COMPARE = {
    "equal": pc.equal,
    "lessThan": pc.less,
    "lessThanOrEqual": pc.less_equal,
    "greaterThan": pc.greater,
    "greaterThanOrEqual": pc.greater_equal,
}
