"""Which columns a row diff compares, and in which types.

The two sides may have different schemas (a column added on one branch, a type widened).
Columns both sides have are compared, in types both fit in (the wider of the two, as Delta
type widening allows); a column only one side has is reported, not compared.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa

from deltaport.diff.base.errors import DiffError


@dataclass(frozen=True)
class ColumnTypeChange:
    column: str
    left_type: str
    right_type: str


@dataclass(frozen=True)
class ComparedSchema:
    """The compared columns (the key first) in their common types, and what differs."""

    schema: pa.Schema
    key: tuple[str, ...]
    only_left: tuple[str, ...]
    only_right: tuple[str, ...]
    type_changes: tuple[ColumnTypeChange, ...]

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(self.schema.names)

    @property
    def values(self) -> tuple[str, ...]:
        """The compared columns that are not the key."""
        return tuple(c for c in self.schema.names if c not in self.key)


def compared_schema(
    left: pa.Schema,
    right: pa.Schema,
    key: Sequence[str] | None = None,
    columns: Sequence[str] | None = None,
) -> ComparedSchema:
    """The comparison of ``left`` and ``right`` (the tables' logical schemas), limited to
    ``columns`` (plus the key) when given."""
    key = tuple(key or ())
    for name in key:
        for side, schema in (("left", left), ("right", right)):
            if name not in schema.names:
                raise DiffError(f"key column {name!r} is not in the {side} table")
    wanted = None if columns is None else [*key, *(c for c in columns if c not in key)]
    if wanted is not None:
        unknown = [c for c in wanted if c not in left.names and c not in right.names]
        if unknown:
            raise DiffError(f"no column {unknown[0]!r} in either table")
    names = [n for n in left.names if wanted is None or n in wanted]
    names += [n for n in right.names if n not in left.names and (wanted is None or n in wanted)]
    common = [n for n in names if n in left.names and n in right.names]
    ordered = [*key, *(n for n in common if n not in key)]
    fields, changes = [], []
    for name in ordered:
        field, change = _common_field(left.field(name), right.field(name))
        fields.append(field)
        if change is not None:
            changes.append(change)
    return ComparedSchema(
        pa.schema(fields),
        key,
        tuple(n for n in names if n not in right.names),
        tuple(n for n in names if n not in left.names),
        tuple(changes),
    )


def _common_field(left: pa.Field, right: pa.Field) -> tuple[pa.Field, ColumnTypeChange | None]:
    if left.type == right.type:
        return left.with_nullable(left.nullable or right.nullable), None
    try:
        unified = pa.unify_schemas(
            [pa.schema([left]), pa.schema([right])], promote_options="permissive"
        ).field(0)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        raise DiffError(
            f"column {left.name!r} is {left.type} on the left and {right.type} on the right; "
            "the two cannot be compared (leave it out with --columns)"
        ) from None
    return unified, ColumnTypeChange(left.name, str(left.type), str(right.type))
