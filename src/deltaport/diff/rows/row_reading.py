"""Reading one side's rows for a row diff: the compared columns, in their common types,
filtered by the ``where`` predicate. Used by every engine that reads with deltaport's
reader (the Arrow engine here, the Spark engine's tasks)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pyarrow as pa

from deltaport.delta.model import Metadata
from deltaport.diff.rows.row_schema import ComparedSchema
from deltaport.diff.rows.row_sources import AnySide
from deltaport.diff.rows.shared_side import SharedRowSide
from deltaport.protocol.predicates import Expr, evaluate_rows, referenced_columns
from deltaport.read.files import read_files
from deltaport.read.plan import table_arrow_schema
from deltaport.storage import Storage


def side_schema(side: AnySide) -> pa.Schema:
    """The logical Arrow schema of a side's table."""
    return table_arrow_schema(side.metadata)


def read_columns(schema: ComparedSchema, where: Expr | None) -> list[str]:
    """The columns to read: the compared ones, then those only the filter needs."""
    columns = list(schema.columns)
    if where is not None:
        for column in referenced_columns(where):
            top = column.name.split(".")[0]
            if top not in columns:
                columns.append(top)
    return columns


def side_batches(
    side: AnySide, files: pa.Table, schema: ComparedSchema, where: Expr | None
) -> Iterator[pa.RecordBatch]:
    """The rows of ``files`` (some of ``side``'s files) as batches of ``schema``."""
    if isinstance(side, SharedRowSide):
        shared = replace(side, files=files).read(read_columns(schema, where))
        return _conformed(shared, schema, where)
    return file_batches(files, side.metadata, side.storage, schema, where)


def file_batches(
    files: pa.Table,
    metadata: Metadata,
    storage: Storage,
    schema: ComparedSchema,
    where: Expr | None,
) -> Iterator[pa.RecordBatch]:
    """``side_batches`` from what a remote task holds (the table's metadata and
    storage, no snapshot)."""
    batches = read_files(files, metadata, storage, columns=read_columns(schema, where))
    return _conformed(batches, schema, where)


def _conformed(
    batches: Iterator[pa.RecordBatch], schema: ComparedSchema, where: Expr | None
) -> Iterator[pa.RecordBatch]:
    """``batches`` filtered by ``where`` and cast to ``schema``."""
    for batch in batches:
        if where is not None:
            batch = batch.filter(evaluate_rows(where, batch))
        yield pa.RecordBatch.from_arrays(
            [batch.column(name).cast(schema.schema.field(name).type) for name in schema.columns],
            schema=schema.schema,
        )


def read_side(side: AnySide, schema: ComparedSchema, where: Expr | None) -> pa.Table:
    """All the rows of ``side``'s files that the diff reads, as one table."""
    return pa.Table.from_batches(side_batches(side, side.files, schema, where), schema.schema)
