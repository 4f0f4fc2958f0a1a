"""The JSON predicate format (``jsonPredicateHints``) <-> the expression tree."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

import msgspec

from deltaport.protocol.predicates.errors import PredicateError, PredicateTooComplexError
from deltaport.protocol.predicates.tree import (
    COMPARISON_OPS,
    VALUE_TYPES,
    And,
    Column,
    Comparison,
    ComparisonOp,
    Expr,
    IsNull,
    Leaf,
    Literal,
    Not,
    Or,
    ValueType,
)
from deltaport.protocol.predicates.values import format_value, parse_value

MAX_DEPTH = 100
"""Deeper trees are rejected rather than evaluated (they are not hints anyone writes)."""

_DEPTH_MESSAGE = "the predicate is nested deeper than {} levels"

_OPS = ("column", "literal", "isNull", "not", "and", "or", *COMPARISON_OPS)


def parse_json_predicate(
    source: str | bytes | Mapping[str, Any], max_depth: int = MAX_DEPTH
) -> Expr:
    """Parse and validate a JSON predicate (text or already-decoded object).

    Raises :class:`PredicateError` naming the offending node's path, e.g.
    ``children[1]: lessThan expects 2 children, found 3``, and
    :class:`PredicateTooComplexError` for a tree deeper than ``max_depth`` ops.
    """
    if isinstance(source, str | bytes):
        try:
            obj = msgspec.json.decode(source)
        except msgspec.DecodeError as exc:
            raise PredicateError(f"predicate is not valid JSON: {exc}") from None
        except RecursionError:
            raise PredicateTooComplexError(_DEPTH_MESSAGE.format(max_depth)) from None
    else:
        obj = source
    expr = _parse_node(obj, "$", 1, max_depth)
    if isinstance(expr, Column | Literal) and _leaf_type(expr) != "bool":
        raise PredicateError(f"$: a {_op_name(expr)} of type {_leaf_type(expr)} is not a predicate")
    return expr


def _parse_node(obj: object, path: str, depth: int, max_depth: int) -> Expr:
    if depth > max_depth:
        raise PredicateTooComplexError(_DEPTH_MESSAGE.format(max_depth))
    if not isinstance(obj, Mapping):
        raise PredicateError(f"{path}: expected an object, found {type(obj).__name__}")
    op = obj.get("op")
    if op not in _OPS:
        raise PredicateError(f"{path}: unknown op {op!r}; supported ops: {', '.join(_OPS)}")
    if op == "column":
        return Column(_string_field(obj, "name", path), _value_type(obj, path))
    if op == "literal":
        value_type = _value_type(obj, path)
        text = _literal_text(obj.get("value"), path)
        try:
            return Literal(parse_value(text, value_type), value_type)
        except PredicateError as exc:
            raise PredicateError(f"{path}: {exc}") from None
    children = obj.get("children")
    if not isinstance(children, list):
        raise PredicateError(f"{path}: {op} needs a 'children' array")
    nodes = [
        _parse_node(c, f"{path}.children[{i}]", depth + 1, max_depth)
        for i, c in enumerate(children)
    ]
    if op in ("and", "or"):
        if len(nodes) < 2:
            raise PredicateError(f"{path}: {op} expects at least 2 children, found {len(nodes)}")
        for i, node in enumerate(nodes):
            _require_predicate(node, f"{path}.children[{i}]")
        return And(tuple(nodes)) if op == "and" else Or(tuple(nodes))
    if op in ("not", "isNull"):
        if len(nodes) != 1:
            raise PredicateError(f"{path}: {op} expects 1 child, found {len(nodes)}")
        if op == "not":
            _require_predicate(nodes[0], f"{path}.children[0]")
            return Not(nodes[0])
        return IsNull(_require_leaf(nodes[0], op, f"{path}.children[0]"))
    if len(nodes) != 2:
        raise PredicateError(f"{path}: {op} expects 2 children, found {len(nodes)}")
    left = _require_leaf(nodes[0], op, f"{path}.children[0]")
    right = _require_leaf(nodes[1], op, f"{path}.children[1]")
    if _leaf_type(left) != _leaf_type(right):
        raise PredicateError(
            f"{path}: type mismatch in {op}: {_leaf_type(left)} vs {_leaf_type(right)}"
        )
    return Comparison(cast(ComparisonOp, op), left, right)


def _require_leaf(node: Expr, op: str, path: str) -> Leaf:
    if not isinstance(node, Column | Literal):
        raise PredicateError(f"{path}: {op} operands must be column or literal ops")
    return node


def _require_predicate(node: Expr, path: str) -> None:
    if isinstance(node, Column | Literal) and _leaf_type(node) != "bool":
        raise PredicateError(
            f"{path}: a {_op_name(node)} of type {_leaf_type(node)} is not a predicate"
        )


def _leaf_type(leaf: Column | Literal) -> str | None:
    return leaf.value_type


def _op_name(leaf: Column | Literal) -> str:
    return "column" if isinstance(leaf, Column) else "literal"


def _string_field(obj: Mapping[str, Any], key: str, path: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not value:
        raise PredicateError(f"{path}: {obj.get('op')} needs a non-empty string {key!r}")
    return value


def _value_type(obj: Mapping[str, Any], path: str) -> ValueType:
    value_type = obj.get("valueType")
    if value_type not in VALUE_TYPES:
        raise PredicateError(
            f"{path}: unsupported valueType {value_type!r}; supported: {', '.join(VALUE_TYPES)}"
        )
    return cast(ValueType, value_type)


def _literal_text(value: object, path: str) -> str:
    match value:
        case str():
            return value
        case bool():
            return "true" if value else "false"
        case int() | float():
            return str(value)
        case None:
            raise PredicateError(f"{path}: literal needs a 'value'")
        case _:
            raise PredicateError(f"{path}: literal value must be a string, found {value!r}")


def predicate_to_json(expr: Expr) -> dict[str, Any]:
    """The JSON format of ``expr`` (what a client sends as ``jsonPredicateHints``).

    Columns must carry a value type; SQL-parsed trees (untyped columns) do not serialise.
    """
    match expr:
        case Column(name=name, value_type=value_type):
            if value_type is None:
                raise PredicateError(f"column {name!r} has no value type")
            return {"op": "column", "name": name, "valueType": value_type}
        case Literal(value=value, value_type=value_type):
            return {"op": "literal", "value": format_value(value), "valueType": value_type}
        case Comparison(op=op, left=left, right=right):
            return {"op": op, "children": [predicate_to_json(left), predicate_to_json(right)]}
        case IsNull(child=child):
            return {"op": "isNull", "children": [predicate_to_json(child)]}
        case Not(child=child):
            return {"op": "not", "children": [predicate_to_json(child)]}
        case And(children=children):
            return {"op": "and", "children": [predicate_to_json(c) for c in children]}
        case Or(children=children):
            return {"op": "or", "children": [predicate_to_json(c) for c in children]}
