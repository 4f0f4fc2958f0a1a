"""A read-only Iceberg REST catalog per share on the sharing listener: Delta snapshots as
Iceberg metadata (see docs/iceberg.md). ``rest`` serves the catalog, asking the sharing
listener's catalog source the same questions as the Delta Sharing routes; ``convert`` makes
the metadata from the Delta log; ``model`` declares the metadata and the catalog's bodies;
``listeners`` mounts it. Uses ``server``, ``catalog``, ``delta``, ``read``, ``storage`` and
``protocol``."""
