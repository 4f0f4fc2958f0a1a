"""Row filtering: evaluate a predicate on data rows with SQL null semantics."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from deltaport.protocol.predicates.domains import (
    Domain,
    compare_literals,
    delta_type_of_arrow,
    resolve_domain,
    strings_to_domain,
)
from deltaport.protocol.predicates.errors import PredicateError
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
)

_COMPARE = {
    "equal": pc.equal,
    "lessThan": pc.less,
    "lessThanOrEqual": pc.less_equal,
    "greaterThan": pc.greater,
    "greaterThanOrEqual": pc.greater_equal,
}

_NATURAL_TYPES = {
    "bool": "boolean",
    "int": "long",
    "long": "long",
    "float": "float",
    "double": "double",
    "string": "string",
    "date": "date",
    "timestamp": "timestamp",
}


def evaluate_rows(expr: Expr, table: pa.Table | pa.RecordBatch) -> pa.BooleanArray:
    """Mask of the rows for which ``expr`` is TRUE (FALSE and NULL both drop the row).

    Comparisons use the same domains as file skipping, so a row that matches here is
    never in a file that :func:`file_mask` drops. Raises :class:`PredicateError` for a
    column the table does not have.
    """
    result = _evaluate(expr, table)
    return pc.fill_null(result, False)


def _evaluate(expr: Expr, table: pa.Table | pa.RecordBatch) -> pa.Array:
    match expr:
        case Not(child=child):
            return pc.invert(_evaluate(child, table))
        case And(children=children):
            result = _evaluate(children[0], table)
            for child in children[1:]:
                result = pc.and_kleene(result, _evaluate(child, table))
            return result
        case Or(children=children):
            result = _evaluate(children[0], table)
            for child in children[1:]:
                result = pc.or_kleene(result, _evaluate(child, table))
            return result
        case IsNull(child=Column() as column):
            return pc.is_null(_column(table, column.name))
        case IsNull(child=Literal()):
            return pa.array([False] * table.num_rows, pa.bool_())
        case Literal(value=bool() as value):
            return pa.array([value] * table.num_rows, pa.bool_())
        case Column(name=name):
            values = _column(table, name)
            if not pa.types.is_boolean(values.type):
                raise PredicateError(f"column {name!r} of type {values.type} is not a predicate")
            return values
        case Comparison(left=Column() as column, right=Literal() as literal):
            return _compare(expr.op, _column(table, column.name), column, literal)
        case Comparison(left=Literal(), right=Column()):
            mirrored = expr.mirrored()
            assert isinstance(mirrored.left, Column) and isinstance(mirrored.right, Literal)
            return _compare(
                mirrored.op, _column(table, mirrored.left.name), mirrored.left, mirrored.right
            )
        case Comparison(left=Literal() as left, right=Literal() as right):
            try:
                holds = compare_literals(expr.op, left, right)
            except ValueError as exc:
                raise PredicateError(str(exc)) from None
            return pa.array([holds] * table.num_rows, pa.bool_())
        case Comparison(left=Column() as left, right=Column() as right):
            try:
                return _COMPARE[expr.op](_column(table, left.name), _column(table, right.name))
            except pa.ArrowException as exc:
                raise PredicateError(
                    f"cannot compare {left.name!r} with {right.name!r}: {exc}"
                ) from None
    raise PredicateError(f"cannot evaluate {expr!r} on rows")


def _compare(op: ComparisonOp, values: pa.Array, column: Column, literal: Literal) -> pa.Array:
    type_name = delta_type_of_arrow(values.type)
    try:
        if type_name is None:
            raise ValueError(f"unsupported column type {values.type}")
        domain, scalar = resolve_domain(type_name, column, literal)
        converted = _to_domain(values, domain)
    except ValueError:
        domain, scalar = resolve_domain(_NATURAL_TYPES[literal.value_type], column, literal)
        converted = strings_to_domain(_as_strings(values, column), domain)
    return _COMPARE[op](converted, scalar)


def _to_domain(values: pa.Array, domain: Domain) -> pa.Array:
    """Cast to the domain; unsafe so nanosecond timestamps truncate to microseconds."""
    if pa.types.is_dictionary(values.type):
        values = values.dictionary_decode()
    return pc.cast(values, domain.arrow_type, safe=False)


def _as_strings(values: pa.Array, column: Column) -> pa.Array:
    try:
        return pc.cast(values, pa.string())
    except pa.ArrowException as exc:
        raise PredicateError(f"column {column.name!r} of type {values.type}: {exc}") from None


def _column(table: pa.Table | pa.RecordBatch, name: str) -> pa.Array:
    if name in table.column_names:
        values = table.column(name)
    else:
        head, *fields = name.split(".")
        if head not in table.column_names:
            raise PredicateError(f"unknown column {name!r}")
        values = table.column(head)
        for field in fields:
            try:
                values = pc.struct_field(values, field)
            except (pa.ArrowException, TypeError, KeyError):
                raise PredicateError(f"unknown column {name!r}") from None
    if isinstance(values, pa.ChunkedArray):
        return values.combine_chunks()
    return values
