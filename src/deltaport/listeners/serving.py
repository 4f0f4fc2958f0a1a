"""Serving a configuration: the sharing listener and, when configured, the admin listener,
in one process until interrupted."""

from __future__ import annotations

import ipaddress
import logging
import tempfile
from collections.abc import Callable
from pathlib import Path

import msgspec
import pyarrow as pa
import uvicorn
from starlette.applications import Starlette

from deltaport.catalog.database.startup import wait_for_database
from deltaport.catalog.model import Recipient
from deltaport.config.loading import load_config
from deltaport.config.model import ServerConfig
from deltaport.config.urls import catalog_url, public_url
from deltaport.listeners.admin_app import create_admin_app
from deltaport.listeners.audit import open_audit_log
from deltaport.listeners.iceberg_mount import mount_iceberg
from deltaport.listeners.servers import serve_all
from deltaport.listeners.startup import check_ports, warn_missing_tables
from deltaport.listeners.tls import TLS_CIPHERS, tls_files
from deltaport.observe.audit_log import AuditLog
from deltaport.observe.health import Readiness
from deltaport.server import create_app
from deltaport.server.files.zero_copy import zero_copy_protocol
from deltaport.server.http.app import files_path_prefix
from deltaport.text.wording import count
from deltaport.web.logs import configure_logging, uvicorn_log_config


def memory_pool() -> pa.MemoryPool:
    """The allocator for the server's Arrow data: jemalloc when this pyarrow has it, else
    the C library's. pyarrow's default, mimalloc, spends about half a second in the kernel
    on the first large answer of a fresh process. Against the C library's, jemalloc faults
    in a third fewer fresh pages while reading a checkpoint, and serving a 1,000,000-file
    table page by page peaked at 693 MiB instead of 825 MiB (``bench_paging.py``)."""
    try:
        return pa.jemalloc_memory_pool()
    except NotImplementedError:  # a pyarrow built without jemalloc
        return pa.system_memory_pool()


def run(
    config_path: str | Path | None,
    host: str | None = None,
    port: int | None = None,
    catalog: str | None = None,
) -> None:
    """Serve the configuration at ``config_path`` (None: the defaults) until interrupted;
    ``host``, ``port`` and ``catalog`` override it. A port in use stops it before anything
    is logged (a ``ListenError``)."""
    config = load_config(config_path) if config_path is not None else ServerConfig()
    overrides = {
        k: v for k, v in (("host", host), ("port", port), ("catalog", catalog)) if v is not None
    }
    if overrides:
        config = msgspec.structs.replace(config, **overrides)
    check_ports(config)
    configure_logging()
    warn_missing_tables(config)
    pa.set_memory_pool(memory_pool())
    url = catalog_url(config)
    if url is not None:
        wait_for_database(url, config.catalog_startup_wait_seconds)
    audit = open_audit_log(config)
    try:
        app = create_app(config, audit.log if audit else None)
        mount_iceberg(app, config, audit.log if audit else None)
        with tempfile.TemporaryDirectory(prefix="deltaport-tls-") as keys:
            _serve(config, app, Path(keys), audit.log if audit else None)
    finally:
        if audit is not None:
            audit.close()  # the buffered records written: a clean stop loses none


def _serve(config: ServerConfig, app: Starlette, keys: Path, audit: AuditLog | None) -> None:
    """Serve ``app`` (and the admin listener); a generated TLS key is written under
    ``keys``, a directory removed when serving ends."""
    ssl: dict[str, str | None] = {}
    if config.ssl is not None:
        files = tls_files(config.ssl, config.host, keys)
        ssl = {
            "ssl_certfile": files.certfile,
            "ssl_keyfile": files.keyfile,
            "ssl_keyfile_password": files.password,
            "ssl_ciphers": TLS_CIPHERS,
        }
    shares = app.state.catalog.view().shares(Recipient("provider"))  # every share
    logging.getLogger(__name__).info(
        "serving %s at %s%s", count(len(shares), "share"), public_url(config), config.endpoint
    )
    configs = [
        uvicorn.Config(
            app,
            host=config.host,
            port=config.port,
            log_level="info",
            log_config=uvicorn_log_config(),
            http=zero_copy_protocol(files_path_prefix(config)),
            access_log=config.access_log,
            timeout_graceful_shutdown=config.shutdown_grace_seconds,
            proxy_headers=False,  # X-Forwarded-For only from trustedProxies (ClientAddresses)
            **ssl,  # type: ignore[arg-type]
        )
    ]
    readiness: Readiness = app.state.readiness
    if config.admin is not None:
        live = getattr(app.state.catalog, "live", None)  # a catalog database's
        refresh = live.refresh if live is not None else None
        configs.append(_admin_listener(config, ssl, readiness, audit, refresh))
    serve_all(configs, readiness.drain, config.drain_seconds)


def _admin_listener(
    config: ServerConfig,
    ssl: dict[str, str | None],
    readiness: Readiness,
    audit: AuditLog | None,
    refresh: Callable[[], None] | None,
) -> uvicorn.Config:
    """The admin listener (admin API and console), TLS as the sharing listener;
    ``refresh`` reloads the sharing listener's catalog after a console change."""
    admin = config.admin
    assert admin is not None
    if not _is_loopback(admin.host):
        logging.getLogger(__name__).warning(
            "the admin listener (console and admin API) is bound to %s, reachable from other "
            "machines: keep it on 127.0.0.1 and reach it through an SSH tunnel, or put it "
            "behind TLS and a firewall",
            admin.host,
        )
    logging.getLogger(__name__).info(
        "admin listener (console and admin API) at %s://%s:%d/console/",
        "https" if ssl else "http",
        admin.host,
        admin.port,
    )
    return uvicorn.Config(
        create_admin_app(config, readiness, audit, refresh),
        host=admin.host,
        port=admin.port,
        log_level="info",
        log_config=uvicorn_log_config(),
        access_log=config.access_log,
        timeout_graceful_shutdown=config.shutdown_grace_seconds,
        proxy_headers=False,  # as the sharing listener's: trustedProxies only
        **ssl,  # type: ignore[arg-type]
    )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
