"""Predicate hints: SQL (``predicateHints``) and JSON (``jsonPredicateHints``) predicates
parsed into one expression tree, evaluated on file metadata (skipping) and on rows."""

from deltaport.protocol.predicates.errors import PredicateError, PredicateTooComplexError
from deltaport.protocol.predicates.json_format import parse_json_predicate, predicate_to_json
from deltaport.protocol.predicates.rows import evaluate_rows
from deltaport.protocol.predicates.skipping import file_mask
from deltaport.protocol.predicates.sql import parse_sql_predicate, parse_sql_predicates
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
    ValueType,
    referenced_columns,
)

__all__ = [
    "And",
    "Column",
    "Comparison",
    "ComparisonOp",
    "Expr",
    "IsNull",
    "Literal",
    "Not",
    "Or",
    "PredicateError",
    "PredicateTooComplexError",
    "ValueType",
    "evaluate_rows",
    "file_mask",
    "parse_json_predicate",
    "parse_sql_predicate",
    "parse_sql_predicates",
    "predicate_to_json",
    "referenced_columns",
]
