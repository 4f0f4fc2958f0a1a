"""Addresses derived from a configuration: where recipients reach the server, and which
catalog database it serves from."""

from __future__ import annotations

import os
from pathlib import Path

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


def iceberg_endpoint_for(sharing_endpoint: str, config: ServerConfig) -> str | None:
    """The Iceberg catalog's URI beside the sharing ``endpoint`` a profile names (the same
    server's, whose ``endpoint`` path it ends with); None when the catalog is off or the
    endpoint is not one this configuration serves."""
    if not config.iceberg.enabled:
        return None
    endpoint, path = sharing_endpoint.rstrip("/"), config.endpoint.rstrip("/")
    if not endpoint.endswith(path):
        return None
    return endpoint[: len(endpoint) - len(path)] + config.iceberg.path.rstrip("/")


def iceberg_metadata_directory(config: ServerConfig) -> Path:
    """Where the Iceberg metadata made from Delta logs is kept: as configured, else beside a
    SQLite catalog, else in the user's cache directory."""
    if config.iceberg.metadata_directory:
        return Path(config.iceberg.metadata_directory).expanduser().resolve()
    catalog = catalog_url(config)
    if catalog and catalog.startswith("sqlite:///"):
        return Path(catalog.removeprefix("sqlite:///")).expanduser().resolve().parent / "iceberg"
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "deltaport" / "iceberg"
