"""Comparing the two sides of a row diff in Spark: a full outer join on the key, or whole
rows as multisets. Both give DataFrames of the change table's columns (``change``,
``key``, ``left``, ``right``, ``changed``, as
``deltaport.diff.rows.row_compare.change_schema``), compared as
``deltaport.diff.rows.row_compare.differs`` compares: null equals null, NaN equals NaN (Spark's
own equality; maps, which Spark cannot compare or group, are compared as JSON text).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import reduce

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from deltaport.diff.rows.row_compare import DELETED, INSERTED, UPDATED

_LEFT_KEY = "__deltaport_lk"
_RIGHT_KEY = "__deltaport_rk"
_LEFT_COUNT = "__deltaport_ln"
_RIGHT_COUNT = "__deltaport_rn"
_IN_LEFT = "__deltaport_in_left"
_IN_RIGHT = "__deltaport_in_right"
_GROUP = "__deltaport_group"
_COPY = "__deltaport_copy"
_CHANGED = T.ArrayType(T.StringType(), containsNull=False)


def col(name: str) -> Column:
    """A top-level column by its exact name (dots, spaces and backticks included)."""
    return F.col("`" + name.replace("`", "``") + "`")


def compare_by_key(left: DataFrame, right: DataFrame, key: Sequence[str]) -> DataFrame:
    """Rows only in ``right`` (inserted), only in ``left`` (deleted), and on both sides
    with other values (updated), unordered. A key repeated on either side fails the query
    that runs it (``raise_error``), as the Arrow engine refuses it."""
    columns = left.columns
    values = [c for c in columns if c not in key]
    lhs = _keyed(left, key, _LEFT_KEY, _LEFT_COUNT, "left")
    rhs = _keyed(right, key, _RIGHT_KEY, _RIGHT_COUNT, "right")
    on = reduce(
        lambda a, b: a & b,
        [F.col(f"{_LEFT_KEY}{i}").eqNullSafe(F.col(f"{_RIGHT_KEY}{i}")) for i in range(len(key))],
    )
    joined = lhs.join(rhs, on=on, how="full_outer")
    in_left, in_right = F.col("left").isNotNull(), F.col("right").isNotNull()
    key_value = F.struct(
        *[
            F.when(in_left, F.col(f"{_LEFT_KEY}{i}")).otherwise(F.col(f"{_RIGHT_KEY}{i}")).alias(k)
            for i, k in enumerate(key)
        ]
    )
    differing = F.array_compact(
        F.array(*[F.when(_differs(left.schema[c].dataType, c), F.lit(c)) for c in values])
    )
    changed = F.when(in_left & in_right, differing).otherwise(F.array().cast(_CHANGED))
    keep = F.when(_repeated(), F.raise_error(_repeat_message(key_value, key))).otherwise(
        ~in_left | ~in_right | (F.size(changed) > 0)
    )
    return joined.where(keep).select(
        F.when(~in_left, F.lit(INSERTED))
        .when(~in_right, F.lit(DELETED))
        .otherwise(F.lit(UPDATED))
        .alias("change"),
        key_value.alias("key"),
        F.col("left"),
        F.col("right"),
        changed.alias("changed"),
    )


def _keyed(df: DataFrame, key: Sequence[str], prefix: str, count: str, row: str) -> DataFrame:
    """The key columns renamed apart, the whole row as a struct, and how often the key
    occurs on this side."""
    return df.select(
        *[col(k).alias(f"{prefix}{i}") for i, k in enumerate(key)],
        F.struct(*[col(c) for c in df.columns]).alias(row),
        F.count(F.lit(1)).over(Window.partitionBy(*[col(k) for k in key])).alias(count),
    )


def _repeated() -> Column:
    return (F.coalesce(F.col(_LEFT_COUNT), F.lit(0)) > 1) | (
        F.coalesce(F.col(_RIGHT_COUNT), F.lit(0)) > 1
    )


def _repeat_message(key_value: Column, key: Sequence[str]) -> Column:
    side = F.when(F.coalesce(F.col(_LEFT_COUNT), F.lit(0)) > 1, "left").otherwise("right")
    return F.concat(
        F.lit(f"the key {', '.join(key)} is not unique in the "),
        side,
        F.lit(" table's changed rows: key values repeat, such as "),
        F.to_json(key_value),
        F.lit(
            "; diff without --key (whole rows) or with a key that identifies rows",
        ),
    )


def _differs(data_type: T.DataType, name: str) -> Column:
    lhs, rhs = F.col("left").getField(name), F.col("right").getField(name)
    if _has_map(data_type):
        lhs, rhs = F.to_json(lhs), F.to_json(rhs)
    return ~lhs.eqNullSafe(rhs)


def _has_map(data_type: T.DataType) -> bool:
    if isinstance(data_type, T.MapType):
        return True
    if isinstance(data_type, T.ArrayType):
        return _has_map(data_type.elementType)
    if isinstance(data_type, T.StructType):
        return any(_has_map(f.dataType) for f in data_type.fields)
    return False


def compare_rows(left: DataFrame, right: DataFrame) -> DataFrame:
    """Whole rows as multisets: each copy a row has more often in ``right`` is inserted,
    each it has more often in ``left`` deleted (``key`` is a null empty struct)."""
    columns = left.columns
    both = left.select(
        *[col(c) for c in columns], F.lit(1).alias(_IN_LEFT), F.lit(0).alias(_IN_RIGHT)
    ).unionByName(
        right.select(
            *[col(c) for c in columns], F.lit(0).alias(_IN_LEFT), F.lit(1).alias(_IN_RIGHT)
        )
    )
    maps = [c for c in columns if _has_map(left.schema[c].dataType)]
    groups = [
        F.to_json(col(c)).alias(f"{_GROUP}{i}") if c in maps else col(c)
        for i, c in enumerate(columns)
    ]
    counted = both.groupBy(*groups).agg(
        F.sum(_IN_LEFT).alias(_IN_LEFT),
        F.sum(_IN_RIGHT).alias(_IN_RIGHT),
        *[F.any_value(col(c)).alias(c) for c in maps],
    )
    excess = F.col(_IN_RIGHT) - F.col(_IN_LEFT)
    row = F.struct(*[col(c) for c in columns])
    copies = counted.where(excess != 0).select(
        row.alias("row"),
        (excess > 0).alias("inserted"),
        F.explode(F.array_repeat(F.lit(True), F.abs(excess).cast("int"))).alias(_COPY),
    )
    inserted = F.col("inserted")
    return copies.select(
        F.when(inserted, F.lit(INSERTED)).otherwise(F.lit(DELETED)).alias("change"),
        F.lit(None).cast(T.StructType([])).alias("key"),
        F.when(~inserted, F.col("row")).alias("left"),
        F.when(inserted, F.col("row")).alias("right"),
        F.array().cast(_CHANGED).alias("changed"),
    )
