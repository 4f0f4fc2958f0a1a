"""The admin listener: the admin API (``/api``, JSON with an admin bearer token) and the
web console (``/console``), on its own host and port, never on the sharing listener."""

from deltaport.admin.app import create_admin_app

__all__ = ["create_admin_app"]
