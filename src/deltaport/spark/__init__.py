"""PySpark connector: ``spark.read.format("deltaSharing")`` and ``spark.readStream``
over the Delta Sharing protocol, as a pure-Python Spark data source (no jar).

    import deltaport.spark
    deltaport.spark.register(spark)
    df = spark.read.format("deltaSharing").load("profile.share#share.schema.table")

and the row diff on Spark: ``deltaport.spark.diff_rows(spark, left, right, key=[...])``.
"""

from __future__ import annotations

from pyspark.sql import SparkSession

from deltaport.spark.base.options import OptionError, SharingOptions, parse_options
from deltaport.spark.base.types import spark_schema, spark_type
from deltaport.spark.base.worker_python import use_driver_python
from deltaport.spark.rows.row_diff import SparkRowDiff, SparkRowEngine, diff_rows
from deltaport.spark.source import FORMAT_NAME, DeltaSharingDataSource


def register(spark: SparkSession) -> None:
    """Make ``format("deltaSharing")`` available in ``spark``'s session. Its Python
    workers run the driver's interpreter when no worker Python is configured and
    ``python3`` on the PATH lacks deltaport; a configured one that lacks it is named in a
    one-line warning."""
    use_driver_python(spark)
    spark.dataSource.register(DeltaSharingDataSource)


__all__ = [
    "FORMAT_NAME",
    "DeltaSharingDataSource",
    "OptionError",
    "SharingOptions",
    "SparkRowDiff",
    "SparkRowEngine",
    "diff_rows",
    "parse_options",
    "register",
    "spark_schema",
    "spark_type",
]
