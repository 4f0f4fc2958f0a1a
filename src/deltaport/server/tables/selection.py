"""Which files a query returns: predicate hints first, then the limit hint.

Both are best effort by the protocol: a hint that cannot be parsed or evaluated is
skipped (all files stay), and a file is only dropped when its partition values or stats
prove that no row of it can match.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa

from deltaport.delta.model import Metadata
from deltaport.protocol.echo import echo
from deltaport.protocol.errors import InvalidParameterError
from deltaport.protocol.predicates import (
    And,
    Expr,
    PredicateError,
    PredicateTooComplexError,
    parse_json_predicate,
    parse_sql_predicate,
)
from deltaport.read.file_selection import apply_limit_hint, matching_files
from deltaport.server.answers.client_gone import check_connected

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class HintSettings:
    """Which hints are evaluated, and the bounds on them (``maxPredicateHints``,
    ``maxPredicateHintLength`` and ``maxPredicateHintDepth`` of the configuration)."""

    evaluate_sql_hints: bool = True
    evaluate_json_hints: bool = True
    max_hints: int = 100
    max_length: int = 65536
    max_depth: int = 64


def select_files(
    files: pa.Table,
    metadata: Metadata,
    predicate_hints: Sequence[str] | None,
    json_predicate_hints: str | None,
    limit_hint: int | None,
    settings: HintSettings,
) -> pa.Table:
    selected = files
    predicates = _hint_predicates(predicate_hints, json_predicate_hints, settings)
    if predicates and files.num_rows:
        expr = predicates[0] if len(predicates) == 1 else And(tuple(predicates))
        check_connected()
        try:
            selected = matching_files(files, metadata, expr)
        except Exception:
            log.warning("predicate hints could not be evaluated; all files are kept", exc_info=True)
    if limit_hint is not None:
        selected = apply_limit_hint(selected, limit_hint)
    return selected


def _hint_predicates(
    predicate_hints: Sequence[str] | None,
    json_predicate_hints: str | None,
    settings: HintSettings,
) -> list[Expr]:
    """The hints that parse; one that does not is skipped (it may only keep more files),
    and so are the SQL hints past ``max_hints``. A hint longer or deeper than the limits
    is refused with 400."""
    _check_lengths(predicate_hints or (), json_predicate_hints, settings.max_length)
    out: list[Expr] = []
    if predicate_hints and settings.evaluate_sql_hints:
        if len(predicate_hints) > settings.max_hints:
            log.info(
                "evaluating the first %d of %d predicate hints (maxPredicateHints)",
                settings.max_hints,
                len(predicate_hints),
            )
        for i, hint in enumerate(predicate_hints[: settings.max_hints]):
            check_connected()
            try:
                out.append(parse_sql_predicate(hint, settings.max_depth))
            except PredicateTooComplexError as exc:
                raise InvalidParameterError(f"predicateHints[{i}]: {exc}") from None
            except PredicateError as exc:
                log.info("skipping predicate hint %s: %s", echo(hint), exc)
    if json_predicate_hints and settings.evaluate_json_hints:
        try:
            out.append(parse_json_predicate(json_predicate_hints, settings.max_depth))
        except PredicateTooComplexError as exc:
            raise InvalidParameterError(f"jsonPredicateHints: {exc}") from None
        except PredicateError as exc:
            log.info("skipping jsonPredicateHints: %s", exc)
    return out


def _check_lengths(sql_hints: Sequence[str], json_hint: str | None, limit: int) -> None:
    for i, hint in enumerate(sql_hints):
        if len(hint) > limit:
            raise InvalidParameterError(
                f"predicateHints[{i}] has {len(hint)} characters; the limit is {limit}"
            )
    if json_hint is not None and len(json_hint) > limit:
        raise InvalidParameterError(
            f"jsonPredicateHints has {len(json_hint)} characters; the limit is {limit}"
        )
