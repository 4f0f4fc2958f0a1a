"""The predicate expression tree shared by SQL hints and JSON hints.

Node and op names follow the Delta Sharing JSON predicate format: ``column``, ``literal``,
``isNull``, ``equal``, ``lessThan``, ``lessThanOrEqual``, ``greaterThan``,
``greaterThanOrEqual``, ``and``, ``or``, ``not``. A column parsed from a SQL hint has no
value type: it is compared in the domain of the table's column type.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal as TypingLiteral
from typing import TypeAlias

ValueType: TypeAlias = TypingLiteral[
    "bool", "int", "long", "string", "date", "float", "double", "timestamp"
]
VALUE_TYPES: tuple[ValueType, ...] = (
    "bool",
    "int",
    "long",
    "string",
    "date",
    "float",
    "double",
    "timestamp",
)

ComparisonOp: TypeAlias = TypingLiteral[
    "equal", "lessThan", "lessThanOrEqual", "greaterThan", "greaterThanOrEqual"
]
COMPARISON_OPS: tuple[ComparisonOp, ...] = (
    "equal",
    "lessThan",
    "lessThanOrEqual",
    "greaterThan",
    "greaterThanOrEqual",
)

_MIRRORED: dict[ComparisonOp, ComparisonOp] = {
    "equal": "equal",
    "lessThan": "greaterThan",
    "lessThanOrEqual": "greaterThanOrEqual",
    "greaterThan": "lessThan",
    "greaterThanOrEqual": "lessThanOrEqual",
}

LiteralValue: TypeAlias = bool | int | Decimal | str | dt.date | dt.datetime
"""Python value of a literal: ``bool`` (bool), ``int`` (int, long), ``Decimal`` (float,
double: kept exact so decimal columns compare exactly), ``str`` (string), ``date``
(date) and timezone-aware ``datetime`` (timestamp). A SQL string literal stays ``str``
and is converted to the column's domain when evaluated."""


@dataclass(frozen=True)
class Column:
    name: str
    """Column name; a dotted name (``a.b``) addresses a field of a struct column."""
    value_type: ValueType | None = None


@dataclass(frozen=True)
class Literal:
    value: LiteralValue
    value_type: ValueType


Leaf: TypeAlias = Column | Literal


@dataclass(frozen=True)
class Comparison:
    op: ComparisonOp
    left: Leaf
    right: Leaf

    def mirrored(self) -> Comparison:
        """The same comparison with its operands swapped (``1 < a`` -> ``a > 1``)."""
        return Comparison(_MIRRORED[self.op], self.right, self.left)


@dataclass(frozen=True)
class IsNull:
    child: Leaf


@dataclass(frozen=True)
class Not:
    child: Expr


@dataclass(frozen=True)
class And:
    children: tuple[Expr, ...]


@dataclass(frozen=True)
class Or:
    children: tuple[Expr, ...]


Expr: TypeAlias = Column | Literal | Comparison | IsNull | Not | And | Or


def referenced_columns(expr: Expr) -> list[Column]:
    """All column references in ``expr``, in order of appearance."""
    match expr:
        case Column():
            return [expr]
        case Literal():
            return []
        case Comparison(left=left, right=right):
            return referenced_columns(left) + referenced_columns(right)
        case IsNull(child=child) | Not(child=child):
            return referenced_columns(child)
        case And(children=children) | Or(children=children):
            return [c for child in children for c in referenced_columns(child)]
