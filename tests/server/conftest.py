"""Fixtures of the server tests (defined in tests/sharing_server.py)."""

from sharing_server import client, server, server_config, tables

__all__ = ["client", "server", "server_config", "tables"]
