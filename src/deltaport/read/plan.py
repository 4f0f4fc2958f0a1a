"""What a read produces: the output columns of a table, and where each one comes from."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa

from deltaport.delta.model import Metadata
from deltaport.protocol.schema import StructField, parse_schema, to_arrow_field

CHANGE_TYPE_COLUMN = "_change_type"
COMMIT_VERSION_COLUMN = "_commit_version"
COMMIT_TIMESTAMP_COLUMN = "_commit_timestamp"

CDF_FIELDS = (
    pa.field(CHANGE_TYPE_COLUMN, pa.string()),
    pa.field(COMMIT_VERSION_COLUMN, pa.int64()),
    pa.field(COMMIT_TIMESTAMP_COLUMN, pa.timestamp("us", tz="UTC")),
)
"""Columns a change-data-feed read adds after the table's columns."""


@dataclass(frozen=True)
class ReadPlan:
    """The output of reading files of one table (one metadata) for some columns.

    ``data_fields`` are read from the data files, ``partition_fields`` come from each file's
    partition values; ``schema`` lists the output columns in table order (then the CDF
    columns when ``cdf``).
    """

    mode: str
    data_fields: tuple[StructField, ...]
    partition_fields: tuple[StructField, ...]
    schema: pa.Schema
    cdf: bool

    @classmethod
    def build(
        cls, metadata: Metadata, *, columns: Sequence[str] | None = None, cdf: bool = False
    ) -> ReadPlan:
        table_schema = parse_schema(metadata.schema_string)
        if columns is None:
            selected = list(table_schema.fields)
        else:
            try:
                selected = [table_schema.field(c) for c in columns]
            except KeyError as exc:
                raise ValueError(f"unknown column {exc.args[0]!r}") from exc
        partition_names = {p.lower() for p in metadata.partition_columns}
        arrow_fields = [to_arrow_field(f) for f in selected]
        if cdf:
            arrow_fields.extend(CDF_FIELDS)
        return cls(
            mode=metadata.column_mapping_mode,
            data_fields=tuple(f for f in selected if f.name.lower() not in partition_names),
            partition_fields=tuple(f for f in selected if f.name.lower() in partition_names),
            schema=pa.schema(arrow_fields),
            cdf=cdf,
        )


def table_arrow_schema(
    metadata: Metadata, *, columns: Sequence[str] | None = None, cdf: bool = False
) -> pa.Schema:
    """The Arrow schema of reading the table (logical names; CDF columns with ``cdf``)."""
    return ReadPlan.build(metadata, columns=columns, cdf=cdf).schema
