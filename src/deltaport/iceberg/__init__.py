"""A read-only Iceberg REST catalog per share on the sharing listener: Delta snapshots as Iceberg
metadata (see docs/iceberg.md). ``routes`` asks the sharing listener's catalog source the
same questions as the Delta Sharing routes; ``listeners`` mounts it. Uses ``server``,
``catalog``, ``delta``, ``read``, ``storage`` and ``protocol``."""
