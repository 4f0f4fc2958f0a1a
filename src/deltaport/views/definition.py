"""A view's SQL (one SELECT in Databricks / Spark SQL) parsed and checked once, when the
view is created: the result is a value object the rest of deltaport passes around."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Mapping

import pyarrow as pa
import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify

from deltaport.protocol.names import name_key
from deltaport.views.duckdb_engine import DuckDBEngine
from deltaport.views.errors import Refusal, ViewDefinitionError
from deltaport.views.functions import (
    NON_DETERMINISTIC,
    RECIPIENT_FUNCTION,
    SHA2_LENGTHS,
    SUPPORTED,
    function_name,
)
from deltaport.views.rewrite import engine_sql, recipient_key, table_name

READ_DIALECT = "databricks"

SchemaOf = Callable[[str], pa.Schema | None]


class Shape(enum.Enum):
    """How a view is materialized: ``ROW_LOCAL`` maps each source file to one output file
    (one table, no join, aggregate, window, DISTINCT, ORDER BY, LIMIT or subquery);
    ``WHOLE`` is recomputed whole for each source version."""

    ROW_LOCAL = "row_local"
    WHOLE = "whole"


@dataclasses.dataclass(frozen=True)
class ViewDefinition:
    sql: str
    sources: tuple[str, ...]  # `share.schema.table` casefolded, in order of first mention
    recipient_keys: frozenset[str]
    output_schema: pa.Schema
    shape: Shape
    tree: exp.Query = dataclasses.field(compare=False, repr=False)

    @property
    def relations(self) -> dict[str, str]:
        """Each source's name -> the relation it is registered under in an engine."""
        return _relations(self.sources)


def _relations(sources: tuple[str, ...]) -> dict[str, str]:
    return {source: f"view_source_{index}" for index, source in enumerate(sources)}


def define_view(sql: str, schema_of: SchemaOf) -> ViewDefinition:
    """``sql`` checked against the tables ``schema_of`` knows, or a `ViewDefinitionError`.
    ``schema_of`` is asked once per source, with its ``share.schema.table`` casefolded
    (object names compare case-insensitively)."""
    try:
        return _checked(sql, schema_of)
    except RecursionError:
        raise ViewDefinitionError(Refusal.SYNTAX, "the SQL is nested too deeply") from None


def _checked(sql: str, schema_of: SchemaOf) -> ViewDefinition:
    tree = _one_select(sql)
    keys = _check_functions(tree)
    schemas = _source_schemas(tree, schema_of)
    _check_columns(tree, schemas)
    sources = tuple(schemas)
    relations = _relations(sources)
    output = _output_schema(tree, relations, schemas, keys)
    return ViewDefinition(
        sql=sql,
        sources=sources,
        recipient_keys=frozenset(keys),
        output_schema=output,
        shape=_shape(tree),
        tree=tree,
    )


def _one_select(sql: str) -> exp.Query:
    try:
        statements = [s for s in sqlglot.parse(sql, read=READ_DIALECT) if s is not None]
    except SqlglotError as error:
        raise ViewDefinitionError(Refusal.SYNTAX, f"syntax error: {error}") from None
    if not statements:
        raise ViewDefinitionError(Refusal.SYNTAX, "syntax error: no statement")
    if len(statements) > 1:
        second = statements[1].sql(dialect=READ_DIALECT)[:80]
        raise ViewDefinitionError(
            Refusal.STATEMENTS, f"a view is one SELECT; a second statement follows: {second}"
        )
    tree = statements[0]
    if not isinstance(tree, exp.Query):
        kind = tree.key.upper()
        raise ViewDefinitionError(Refusal.NOT_SELECT, f"a view is a SELECT, not {kind}")
    return tree


def _check_functions(tree: exp.Query) -> set[str]:
    """The recipient property keys used; refuses any function outside the list."""
    keys: set[str] = set()
    sample = tree.find(exp.TableSample)
    if sample is not None:
        raise ViewDefinitionError(
            Refusal.NON_DETERMINISTIC, f"a sample is not deterministic: {sample.sql(READ_DIALECT)}"
        )
    for node in tree.find_all(exp.Func):
        name = function_name(node)
        if isinstance(node, exp.Anonymous) and name == RECIPIENT_FUNCTION:
            key = recipient_key(node)
            if key is None:
                raise ViewDefinitionError(
                    Refusal.RECIPIENT_ARGUMENT,
                    f"current_recipient takes one string literal: {node.sql(READ_DIALECT)}",
                )
            keys.add(key)
        elif isinstance(node, NON_DETERMINISTIC):
            raise ViewDefinitionError(
                Refusal.NON_DETERMINISTIC, f"{name} is not deterministic: {node.sql(READ_DIALECT)}"
            )
        elif not isinstance(node, SUPPORTED):
            raise ViewDefinitionError(Refusal.FUNCTION, f"function not supported in a view: {name}")
        elif isinstance(node, exp.SHA2) and _sha2_length(node) not in SHA2_LENGTHS:
            raise ViewDefinitionError(
                Refusal.FUNCTION, f"sha2 supports the bit length 256 only: {node.sql(READ_DIALECT)}"
            )
    return keys


def _sha2_length(node: exp.SHA2) -> str:
    length = node.args.get("length")
    return str(length.this) if isinstance(length, exp.Literal) else "?"


def _ctes(tree: exp.Query) -> set[str]:
    return {name_key(cte.alias_or_name) for cte in tree.find_all(exp.CTE)}


def _source_schemas(tree: exp.Query, schema_of: SchemaOf) -> dict[str, pa.Schema]:
    ctes = _ctes(tree)
    schemas: dict[str, pa.Schema] = {}
    for table in tree.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier):
            what = table.this.sql(READ_DIALECT) if table.this else table.sql(READ_DIALECT)
            raise ViewDefinitionError(Refusal.FUNCTION, f"a view reads tables only: {what}")
        name = table_name(table)
        if not table.db and name in ctes:
            continue
        if name in schemas:
            continue
        schema = schema_of(name) if table.catalog and table.db else None
        if schema is None:
            written = ".".join(p for p in (table.catalog, table.db, table.name) if p)
            raise ViewDefinitionError(
                Refusal.UNKNOWN_TABLE, f"unknown table {written} (a view names share.schema.table)"
            )
        schemas[name] = schema
    if not schemas:
        raise ViewDefinitionError(Refusal.UNKNOWN_TABLE, "a view reads at least one table")
    return schemas


def _type_text(data_type: pa.DataType) -> str:
    """A sqlglot type for qualifying columns: only nesting matters there."""
    if pa.types.is_struct(data_type):
        fields = ", ".join(
            f"{exp.to_identifier(f.name, quoted=True).sql(READ_DIALECT)}: {_type_text(f.type)}"
            for f in data_type
        )
        return f"STRUCT<{fields}>"
    if pa.types.is_list(data_type) or pa.types.is_large_list(data_type):
        return f"ARRAY<{_type_text(data_type.value_type)}>"
    if pa.types.is_map(data_type):
        return f"MAP<{_type_text(data_type.key_type)}, {_type_text(data_type.item_type)}>"
    return "STRING"


def _check_columns(tree: exp.Query, schemas: Mapping[str, pa.Schema]) -> None:
    nested: dict[str, dict[str, dict[str, dict[str, str]]]] = {}
    for name, schema in schemas.items():
        share, schema_name, table = name.split(".")
        columns = {field.name: _type_text(field.type) for field in schema}
        nested.setdefault(share, {}).setdefault(schema_name, {})[table] = columns
    known: dict[str, object] = dict(nested)
    try:
        qualify(tree.copy(), schema=known, dialect=READ_DIALECT, validate_qualify_columns=True)
    except SqlglotError as error:
        raise ViewDefinitionError(Refusal.UNKNOWN_COLUMN, str(error)) from None
    for selected in tree.selects:
        if not isinstance(selected, exp.Alias | exp.Column | exp.Star):
            raise ViewDefinitionError(
                Refusal.OUTPUT,
                f"name each computed column with AS: {selected.sql(READ_DIALECT)[:80]}",
            )


def _output_schema(
    tree: exp.Query,
    relations: Mapping[str, str],
    schemas: Mapping[str, pa.Schema],
    keys: set[str],
) -> pa.Schema:
    """The columns and Arrow types of the view's output: its SQL run by the embedded
    engine over empty sources. Every key is bound to a string, the type of every property:
    the engine types an expression over a NULL constant by its other operands (DuckDB makes
    ``int_column || CAST(NULL AS TEXT)`` an integer), so a NULL binding would give a schema
    that no recipient with the property gets."""
    try:
        sql = engine_sql(tree, relations, dict.fromkeys(keys, ""), DuckDBEngine.dialect)
    except SqlglotError as error:
        raise ViewDefinitionError(Refusal.ENGINE, f"cannot run this view: {error}") from None
    empty = {relations[name]: schema.empty_table() for name, schema in schemas.items()}
    try:
        schema = DuckDBEngine(memory_limit="256MB").run(sql, empty).read_all().schema
    except Exception as error:
        first_line = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise ViewDefinitionError(Refusal.ENGINE, f"cannot run this view: {first_line}") from None
    names = [field.name.casefold() for field in schema]  # Delta's names ignore case
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ViewDefinitionError(
            Refusal.OUTPUT, f"output columns must have distinct names: {', '.join(duplicates)}"
        )
    return schema


def _shape(tree: exp.Query) -> Shape:
    if not isinstance(tree, exp.Select) or len(list(tree.find_all(exp.Table))) != 1:
        return Shape.WHOLE
    spreading = (exp.Join, exp.AggFunc, exp.Window, exp.Subquery, exp.CTE, exp.Distinct)
    if any(tree.find(kind) is not None for kind in spreading):
        return Shape.WHOLE
    clauses = ("group", "having", "qualify", "order", "limit", "offset", "distinct")
    if any(tree.args.get(clause) for clause in clauses):
        return Shape.WHOLE
    return Shape.ROW_LOCAL
