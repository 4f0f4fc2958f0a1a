"""Addresses derived from a configuration: where recipients reach the server, and which
catalog database it serves from."""

from __future__ import annotations

import os

from deltaport.config.model import ServerConfig

CATALOG_ENV = "DELTAPORT_CATALOG"


def public_url(config: ServerConfig) -> str:
    """Where recipients reach this server (``publicUrl``, else from host, port and TLS)."""
    if config.public_url:
        return config.public_url.rstrip("/")
    scheme = "https" if config.ssl else "http"
    host = "localhost" if config.host in ("0.0.0.0", "::", "") else config.host
    if ":" in host:
        host = f"[{host}]"
    return f"{scheme}://{host}:{config.port}"


def catalog_url(config: ServerConfig) -> str | None:
    """The database catalog to use, if any: the configuration's, else the environment's."""
    return config.catalog or os.environ.get(CATALOG_ENV) or None
