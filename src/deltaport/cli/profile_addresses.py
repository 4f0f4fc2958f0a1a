"""Where a profile written by the catalog commands points: the sharing endpoint (``--endpoint``,
else the server's as ``--config`` says, else the default) and the Iceberg catalog beside it."""

from __future__ import annotations

import argparse

DEFAULT_ENDPOINT = "http://localhost:8080/delta-sharing"
"""Where a profile points when neither ``--endpoint`` nor ``--config`` says."""


def explicit_endpoint(args: argparse.Namespace) -> str | None:
    return str(args.endpoint).rstrip("/") if args.endpoint else None


def fallback_endpoint(args: argparse.Namespace) -> str:
    """The server's sharing URL as ``--config`` says (its ``publicUrl`` and ``endpoint``;
    read now, so that a configuration that cannot be loaded stops the command before the
    catalog changes), else ``http://localhost:8080/delta-sharing``."""
    if args.config:
        from deltaport.config.loading import load_config
        from deltaport.config.urls import public_url

        config = load_config(args.config)
        return public_url(config) + config.endpoint
    return DEFAULT_ENDPOINT


def iceberg_endpoint(args: argparse.Namespace, endpoint: str) -> str | None:
    """The ``icebergEndpoint`` of a profile for ``endpoint``: beside it, as ``--config``
    (else the defaults) places the Iceberg catalog."""
    from deltaport.config.loading import load_config
    from deltaport.config.model import ServerConfig
    from deltaport.config.urls import iceberg_endpoint_for

    config = load_config(args.config) if args.config else ServerConfig()
    return iceberg_endpoint_for(endpoint, config)
