"""Lets Spark find the ``deltaSharing`` data source without ``deltaport.spark.register``.

Spark 4 looks for installed top-level modules named ``pyspark_*`` that expose a
``DefaultSource`` data source class and registers them by their ``name()``.
"""

from deltaport.spark import DeltaSharingDataSource as DefaultSource

__all__ = ["DefaultSource"]
