"""SQL predicate hints (``predicateHints``) -> the expression tree.

The protocol lists comparisons between a column and a constant (``=``, ``>``, ``<``,
``>=``, ``<=``, ``<>``) and ``IS [NOT] NULL``. Clients such as Spark wrap those in
parentheses and quote names with backticks, and combine them with ``AND``/``OR``/``NOT``,
so those are accepted too; so are ``DATE '...'`` and ``TIMESTAMP '...'`` literals. Anything
else is rejected with :class:`PredicateError`.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from deltaport.protocol.echo import echo
from deltaport.protocol.predicates.errors import PredicateError, PredicateTooComplexError
from deltaport.protocol.predicates.tree import (
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
)
from deltaport.protocol.predicates.values import parse_date, parse_timestamp

_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<string>'(?:[^'\\]|\\.|'')*')
  | (?P<quoted>`(?:[^`]|``)+`)
  | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<symbol><=|>=|<>|!=|==|=|<|>|\(|\)|\.|-)
    """,
    re.VERBOSE,
)
_COMPARISONS: dict[str, tuple[ComparisonOp, bool]] = {
    "=": ("equal", False),
    "==": ("equal", False),
    "<": ("lessThan", False),
    "<=": ("lessThanOrEqual", False),
    ">": ("greaterThan", False),
    ">=": ("greaterThanOrEqual", False),
    "<>": ("equal", True),
    "!=": ("equal", True),
}
_KEYWORDS = {"and", "or", "not", "is", "null", "true", "false"}
_LONG_RANGE = (-(2**63), 2**63 - 1)
MAX_DEPTH = 100
"""Default bound on nested ``NOT`` and parentheses (each costs the parser stack frames)."""


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    pos: int


def parse_sql_predicates(hints: Sequence[str], max_depth: int = MAX_DEPTH) -> Expr:
    """Parse a list of SQL hints into one predicate (their conjunction)."""
    if not hints:
        raise PredicateError("no predicate hints given")
    exprs = []
    for i, hint in enumerate(hints):
        try:
            exprs.append(parse_sql_predicate(hint, max_depth))
        except PredicateError as exc:
            raise PredicateError(f"predicateHints[{i}]: {exc}") from None
    return exprs[0] if len(exprs) == 1 else And(tuple(exprs))


def parse_sql_predicate(text: str, max_depth: int = MAX_DEPTH) -> Expr:
    """Parse one SQL hint such as ``date >= '2021-01-01'`` or ``id IS NOT NULL``.

    More than ``max_depth`` nested ``NOT`` and parentheses raise
    :class:`PredicateTooComplexError`."""
    parser = _Parser(text, _tokenize(text), max_depth)
    expr = parser.parse_or()
    parser.expect_end()
    return expr


def _tokenize(text: str) -> list[_Token]:
    tokens = []
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise PredicateError(f"unexpected character {text[pos]!r} at {pos} in {echo(text)}")
        kind = match.lastgroup or ""
        if kind != "space":
            tokens.append(_Token(kind, match.group(), pos))
        pos = match.end()
    return tokens


class _Parser:
    def __init__(self, text: str, tokens: list[_Token], max_depth: int) -> None:
        self.text = text
        self.tokens = tokens
        self.i = 0
        self.depth = 0
        self.max_depth = max_depth

    def peek(self, offset: int = 0) -> _Token | None:
        j = self.i + offset
        return self.tokens[j] if j < len(self.tokens) else None

    def is_word(self, word: str, offset: int = 0) -> bool:
        token = self.peek(offset)
        return token is not None and token.kind == "word" and token.text.lower() == word

    def is_symbol(self, symbol: str) -> bool:
        token = self.peek()
        return token is not None and token.kind == "symbol" and token.text == symbol

    def take(self) -> _Token:
        token = self.peek()
        if token is None:
            raise PredicateError(f"unexpected end of {echo(self.text)}")
        self.i += 1
        return token

    def fail(self, what: str) -> PredicateError:
        token = self.peek()
        where = "end" if token is None else f"{echo(token.text)} at {token.pos}"
        return PredicateError(f"expected {what}, found {where} in {echo(self.text)}")

    def expect_end(self) -> None:
        if self.peek() is not None:
            raise self.fail("end of predicate")

    def parse_or(self) -> Expr:
        children = [self.parse_and()]
        while self.is_word("or"):
            self.take()
            children.append(self.parse_and())
        return children[0] if len(children) == 1 else Or(tuple(children))

    def parse_and(self) -> Expr:
        children = [self.parse_not()]
        while self.is_word("and"):
            self.take()
            children.append(self.parse_not())
        return children[0] if len(children) == 1 else And(tuple(children))

    def parse_not(self) -> Expr:
        if self.is_word("not"):
            self.take()
            return Not(self.nested(self.parse_not))
        if self.is_symbol("("):
            self.take()
            expr = self.nested(self.parse_or)
            if not self.is_symbol(")"):
                raise self.fail("')'")
            self.take()
            return expr
        return self.parse_comparison()

    def nested(self, parse: Callable[[], Expr]) -> Expr:
        """``parse()`` one level deeper, within the parser's depth bound."""
        self.depth += 1
        if self.depth > self.max_depth:
            raise PredicateTooComplexError(
                f"the predicate nests NOT and parentheses deeper than {self.max_depth} levels"
            )
        expr = parse()
        self.depth -= 1
        return expr

    def parse_comparison(self) -> Expr:
        left = self.parse_operand()
        token = self.peek()
        if token is not None and token.kind == "symbol" and token.text in _COMPARISONS:
            self.take()
            op, negated = _COMPARISONS[token.text]
            comparison = Comparison(op, left, self.parse_operand())
            return Not(comparison) if negated else comparison
        if self.is_word("is"):
            self.take()
            negated = self.is_word("not")
            if negated:
                self.take()
            if not self.is_word("null"):
                raise self.fail("NULL")
            self.take()
            return Not(IsNull(left)) if negated else IsNull(left)
        if isinstance(left, Literal) and left.value_type == "bool":
            return left
        if isinstance(left, Column):
            return left
        raise self.fail("a comparison operator or IS [NOT] NULL")

    def parse_operand(self) -> Leaf:
        token = self.peek()
        if token is None:
            raise self.fail("a column or a literal")
        if token.kind == "string":
            self.take()
            return Literal(_unquote(token.text), "string")
        if token.kind == "number" or (token.kind == "symbol" and token.text == "-"):
            return self.parse_number()
        if token.kind == "word" and token.text.lower() in ("date", "timestamp"):
            next_token = self.peek(1)
            if next_token is not None and next_token.kind == "string":
                return self.parse_typed_literal()
        if token.kind == "word" and token.text.lower() in ("true", "false"):
            self.take()
            return Literal(token.text.lower() == "true", "bool")
        if token.kind == "word" and token.text.lower() == "null":
            raise PredicateError(
                f"comparison with NULL is never true, use IS [NOT] NULL in {echo(self.text)}"
            )
        if token.kind == "quoted" or (token.kind == "word" and token.text.lower() not in _KEYWORDS):
            return self.parse_column()
        raise self.fail("a column or a literal")

    def parse_column(self) -> Column:
        parts = [_identifier(self.take())]
        while self.is_symbol("."):
            self.take()
            token = self.peek()
            if token is None or token.kind not in ("word", "quoted"):
                raise self.fail("a field name after '.'")
            parts.append(_identifier(self.take()))
        return Column(".".join(parts))

    def parse_number(self) -> Literal:
        sign = ""
        if self.is_symbol("-"):
            self.take()
            sign = "-"
        token = self.peek()
        if token is None or token.kind != "number":
            raise self.fail("a number")
        self.take()
        text = sign + token.text
        if re.fullmatch(r"-?\d+", text):
            value = int(text)
            if _LONG_RANGE[0] <= value <= _LONG_RANGE[1]:
                return Literal(value, "long")
        return Literal(Decimal(text), "double")

    def parse_typed_literal(self) -> Literal:
        kind = self.take().text.lower()
        text = _unquote(self.take().text)
        try:
            if kind == "date":
                return Literal(parse_date(text), "date")
            value = parse_timestamp(text)
        except ValueError as exc:
            raise PredicateError(f"bad {kind.upper()} literal {echo(text)}: {exc}") from None
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return Literal(value, "timestamp")


def _identifier(token: _Token) -> str:
    if token.kind == "quoted":
        return token.text[1:-1].replace("``", "`")
    return token.text


def _unquote(text: str) -> str:
    body = text[1:-1]
    return re.sub(r"''|\\(.)", lambda m: m.group(1) if m.group(1) is not None else "'", body)
