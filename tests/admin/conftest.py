"""Fixtures of the admin listener's tests (defined in tests/admin_support.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "diff"))  # difftables

from admin_support import admin_server, admin_tables, catalog_admin_server, short_session_server
from sharing_server import server, server_config, tables

__all__ = [
    "admin_server",
    "admin_tables",
    "catalog_admin_server",
    "server",
    "server_config",
    "short_session_server",
    "tables",
]
