"""Checks before a server says it serves: its ports are free (else one line naming the port
and the fix, nothing logged) and the local tables of a YAML configuration are there (else a
warning naming the table and its location)."""

from __future__ import annotations

import errno
import logging
import os
import socket
from collections.abc import Iterator

from deltaport.catalog.database.connection import (
    CatalogMissingError,
    CatalogUrlError,
    DatabaseUnavailableError,
)
from deltaport.catalog.database.migrations import CatalogSchemaError
from deltaport.config.model import ServerConfig
from deltaport.storage import InvalidLocationError, parse_location


class ListenError(Exception):
    """A listener cannot bind its address; nothing was served."""


def start_up_errors() -> tuple[type[Exception], ...]:
    """Why a server did not start, each with a message for the operator (no traceback): its
    catalog cannot be reached, found or migrated, or its address cannot be bound."""
    return (
        CatalogUrlError,
        CatalogMissingError,
        CatalogSchemaError,
        DatabaseUnavailableError,
        ListenError,
    )


def port_in_use(host: str, port: int) -> bool:
    """Whether another process listens on ``port``, probed as uvicorn binds it (IPv6 for a
    host with a colon, else IPv4; a port only waiting to close counts as free);
    :class:`ListenError` when the address cannot be bound for another reason."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except socket.gaierror as exc:
            raise ListenError(f"cannot listen on {host}: {exc.strerror}") from None
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return True
            raise ListenError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    return False


def check_ports(config: ServerConfig) -> None:
    """Refuse to start when the sharing or the admin listener's port is taken."""
    if port_in_use(config.host, config.port):
        raise ListenError(
            f"port {config.port} on {config.host} is in use by another process: stop it, or "
            "choose another port with --port (or `port` in the configuration)"
        )
    admin = config.admin
    if admin is not None and port_in_use(admin.host, admin.port):
        raise ListenError(
            f"the admin listener's port {admin.port} on {admin.host} is in use by another "
            "process: stop it, or choose another with `admin.port` in the configuration"
        )


def warn_missing_tables(config: ServerConfig) -> None:
    """Warn of each table of the YAML configuration on local disk that holds no Delta log:
    recipients would get 404 for it. (Tables on object stores are not probed at start: one
    request each; ``deltaport table add`` checks a catalog's tables when they are added.)"""
    log = logging.getLogger(__name__)
    for name, location, problem in _missing_local_tables(config):
        log.warning(
            "table %s: its location %s %s; recipients get 404 for it until a Delta table is there",
            name,
            location,
            problem,
        )


def _missing_local_tables(config: ServerConfig) -> Iterator[tuple[str, str, str]]:
    for share in config.shares:
        for schema in share.schemas:
            for table in schema.tables:
                try:
                    where = parse_location(table.location)
                except InvalidLocationError:
                    continue  # refused when the table is read, with its own error
                if where.kind != "local" or os.path.isdir(os.path.join(where.key, "_delta_log")):
                    continue
                problem = "holds no _delta_log" if os.path.isdir(where.key) else "does not exist"
                yield f"{share.name}.{schema.name}.{table.name}", table.location, problem
