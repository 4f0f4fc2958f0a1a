"""A read-only Iceberg REST catalog per share on the sharing listener: Delta snapshots as Iceberg
metadata. Asks ``server.sources`` and ``server.tables`` the same questions as the sharing API;
``listeners`` mounts it. (Its modules land with issue 36.)"""
