"""Arrow schemas (what the reader yields) -> Spark schemas (what ``DataSource.schema()``
declares). Spark checks every batch against the declared schema, so the declared one is
derived from the very Arrow schema the executors produce."""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql import types as T

_PRIMITIVES: dict[pa.DataType, T.DataType] = {
    pa.bool_(): T.BooleanType(),
    pa.int8(): T.ByteType(),
    pa.int16(): T.ShortType(),
    pa.int32(): T.IntegerType(),
    pa.int64(): T.LongType(),
    pa.float32(): T.FloatType(),
    pa.float64(): T.DoubleType(),
    pa.string(): T.StringType(),
    pa.large_string(): T.StringType(),
    pa.binary(): T.BinaryType(),
    pa.large_binary(): T.BinaryType(),
    pa.date32(): T.DateType(),
    pa.null(): T.NullType(),
}


def spark_schema(schema: pa.Schema) -> T.StructType:
    """The Spark schema of an Arrow schema (field metadata dropped)."""
    return T.StructType([_field(f) for f in schema])


def _field(arrow_field: pa.Field) -> T.StructField:
    return T.StructField(arrow_field.name, spark_type(arrow_field.type), arrow_field.nullable)


def spark_type(arrow_type: pa.DataType) -> T.DataType:
    """The Spark type of an Arrow type; timestamps with a zone are Spark ``timestamp``
    (instants), without one ``timestamp_ntz``."""
    primitive = _PRIMITIVES.get(arrow_type)
    if primitive is not None:
        return primitive
    if pa.types.is_timestamp(arrow_type):
        return T.TimestampType() if arrow_type.tz is not None else T.TimestampNTZType()
    if pa.types.is_decimal(arrow_type):
        return T.DecimalType(arrow_type.precision, arrow_type.scale)
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        element = arrow_type.value_field
        return T.ArrayType(spark_type(element.type), element.nullable)
    if pa.types.is_map(arrow_type):
        item = arrow_type.item_field
        return T.MapType(spark_type(arrow_type.key_type), spark_type(item.type), item.nullable)
    if pa.types.is_struct(arrow_type):
        return T.StructType([_field(arrow_type.field(i)) for i in range(arrow_type.num_fields)])
    raise TypeError(f"the Arrow type {arrow_type} has no Spark equivalent")
