"""The row diff's Spark engine: the changed files read in Spark tasks and joined by key. Uses
``diff.rows``, ``base`` and ``reading``."""
