"""The admin API (``/api``, JSON with an admin bearer token): the catalog's shares, tables,
recipients and grants, and the diff service. Uses ``config``, ``catalog`` and below; the
console uses its services, never the reverse; ``listeners`` mounts it with the console."""
