"""Batch reads: partitions planned from a snapshot's files, filters pushed down, files read in
Spark tasks in url or dir mode. Uses ``base``, ``client`` and ``read``."""
