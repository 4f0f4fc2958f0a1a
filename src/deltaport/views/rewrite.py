"""A checked view's syntax tree made into one engine's SQL: each ``current_recipient(key)``
replaced in the tree by a typed literal (never by formatting text), each source table by
the engine-side relation it is registered under."""

from __future__ import annotations

from collections.abc import Mapping

from sqlglot import exp
from sqlglot.errors import ErrorLevel

from deltaport.protocol.names import name_key
from deltaport.views.functions import RECIPIENT_FUNCTION


def table_name(table: exp.Table) -> str:
    """``share.schema.table`` as compared (case-insensitively, as every object name is),
    empty parts left out."""
    return ".".join(name_key(part) for part in (table.catalog, table.db, table.name) if part)


def recipient_key(node: exp.Expr) -> str | None:
    """The key of a ``current_recipient('key')`` call, None for any other node or call."""
    if not isinstance(node, exp.Anonymous) or str(node.name).lower() != RECIPIENT_FUNCTION:
        return None
    arguments = node.expressions
    if len(arguments) == 1 and isinstance(arguments[0], exp.Literal) and arguments[0].is_string:
        return str(arguments[0].this)
    return None


def _literal(value: str | None) -> exp.Expr:
    if value is None:
        return exp.cast(exp.null(), exp.DataType.build("string"))
    return exp.Literal.string(value)


def engine_sql(
    tree: exp.Expr,
    relations: Mapping[str, str],
    values: Mapping[str, str | None],
    dialect: str,
) -> str:
    """``tree`` (left unchanged) as ``dialect`` SQL with ``values`` bound and the source
    tables renamed by ``relations``; a table keeps its name as its alias, so columns
    qualified by it still resolve."""
    bound = tree.copy()
    for node in list(bound.find_all(exp.Anonymous)):
        key = recipient_key(node)
        if key is not None:
            node.replace(_literal(values.get(key)))
    for table in list(bound.find_all(exp.Table)):
        relation = relations.get(table_name(table))
        if relation is None:
            continue
        alias = table.args.get("alias") or exp.TableAlias(this=exp.to_identifier(table.name))
        table.replace(exp.Table(this=exp.to_identifier(relation, quoted=True), alias=alias))
    return bound.sql(dialect=dialect, unsupported_level=ErrorLevel.RAISE)
