"""The process's listeners, composed above everything they serve: ``run`` starts the sharing
listener (``server``) and the admin listener, whose app (``create_admin_app``) mounts the
admin API (``admin``) and the console (``console``) together. Nothing imports this package
but the command line and ``python -m deltaport.server``."""

from deltaport.listeners.admin_app import create_admin_app
from deltaport.listeners.serving import run

__all__ = ["create_admin_app", "run"]
