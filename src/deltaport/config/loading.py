"""Loading a server configuration: read the YAML, substitute ``${ENV_VAR}`` in string
values, decode it into :class:`~deltaport.config.model.ServerConfig` and check the whole of
it; every problem is reported with its path in the file
(``shares[0].schemas[1].tables[2].name``)."""

from __future__ import annotations

import logging
import math
import os
import re
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

import msgspec
import yaml

from deltaport.catalog.access import access_problem
from deltaport.catalog.partition_filter import PartitionFilterError
from deltaport.catalog.partition_filter import check as check_filter
from deltaport.catalog.recipient_access import parse_network
from deltaport.catalog.tokens import MAX_TOKEN_LENGTH
from deltaport.config.model import (
    REFERENCE_KEYS_WITHOUT_EFFECT,
    AdminConfig,
    ConfigError,
    RateConfig,
    RateLimitsConfig,
    ServerConfig,
)
from deltaport.protocol.names import name_key, name_problem
from deltaport.storage.uri import is_relative_path

log = logging.getLogger(__name__)

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def load_config(path: str | Path) -> ServerConfig:
    """Read, substitute and validate a configuration file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from exc
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {path} is not valid YAML: {exc}") from exc
    return parse_config(raw if raw is not None else {}, os.environ)


def parse_config(raw: Any, environ: Mapping[str, str]) -> ServerConfig:
    """Validate an already parsed YAML document (``environ`` fills ``${VAR}``)."""
    if not isinstance(raw, dict):
        raise ConfigError("config: the top level must be a mapping")
    raw = _substitute(raw, environ, "")
    for key in sorted(REFERENCE_KEYS_WITHOUT_EFFECT & raw.keys()):
        log.info("config key %s is accepted for compatibility and has no effect", key)
        del raw[key]
    try:
        config = msgspec.convert(raw, ServerConfig, strict=False)
    except msgspec.ValidationError as exc:
        raise ConfigError(_readable_validation_error(str(exc))) from None
    _check(config)
    return config


def _substitute(value: Any, environ: Mapping[str, str], path: str) -> Any:
    if isinstance(value, str):

        def repl(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in environ:
                raise ConfigError(f"{path or 'config'}: environment variable {name} is not set")
            return environ[name]

        return _ENV_REF.sub(repl, value)
    if isinstance(value, dict):
        return {k: _substitute(v, environ, _join(path, str(k))) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, environ, f"{path}[{i}]") for i, v in enumerate(value)]
    return value


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _readable_validation_error(message: str) -> str:
    """msgspec says ``... - at `$.shares[0].name` ``; turn that into ``shares[0].name: ...``."""
    match = re.search(r"^(.*) - at `\$\.?(.*)`$", message)
    what, where = (match.group(1), match.group(2)) if match else (message, "")
    unknown = re.fullmatch(r"Object contains unknown field `(.*)`", what)
    if unknown:
        return f"{_join(where, unknown.group(1))}: unknown key"
    return f"{where or 'config'}: {what}"


def _check(config: ServerConfig) -> None:
    if config.version != 1:
        raise ConfigError(f"version: only version 1 is supported, got {config.version}")
    if not config.endpoint.startswith("/"):
        raise ConfigError(f"endpoint: must start with '/', got {config.endpoint!r}")
    iceberg_path = config.iceberg.path
    if not iceberg_path.startswith("/") or iceberg_path.rstrip("/") in ("", config.endpoint):
        raise ConfigError(
            f"iceberg.path: must start with '/' and differ from endpoint, got {iceberg_path!r}"
        )
    for key in ("retain_hours", "cleanup_interval_minutes"):
        if not getattr(config.iceberg, key) >= 0:
            raise ConfigError(f"iceberg.{_camel(key)}: must not be negative")
    if config.pre_signed_url_timeout_seconds <= 0:
        raise ConfigError("preSignedUrlTimeoutSeconds: must be positive")
    for key in (
        "max_request_body_bytes",
        "max_predicate_hints",
        "max_predicate_hint_length",
        "max_predicate_hint_depth",
        "snapshot_cache_bytes",
        "max_ip_access_list_entries",
        "activation_link_lifetime_seconds",
        "oauth_access_token_lifetime_seconds",
    ):
        if getattr(config, key) <= 0:
            raise ConfigError(f"{_camel(key)}: must be positive")
    _check_rate_limits(config.rate_limits)
    for key in ("max_per_recipient", "max_bytes_per_recipient", "idle_seconds", "workers"):
        if getattr(config.async_queries, key) <= 0:
            raise ConfigError(f"asyncQueries.{_camel(key)}: must be positive")
    for i, proxy in enumerate(config.trusted_proxies):
        try:
            parse_network(proxy)
        except ValueError as exc:
            raise ConfigError(f"trustedProxies[{i}]: {exc}") from None
    if config.shutdown_grace_seconds < 0:
        raise ConfigError("shutdownGraceSeconds: must not be negative")
    if config.drain_seconds < 0:
        raise ConfigError("drainSeconds: must not be negative")
    token = config.authorization.bearer_token if config.authorization else None
    if token is not None and len(token) > MAX_TOKEN_LENGTH:
        raise ConfigError(
            f"authorization.bearerToken: longer than {MAX_TOKEN_LENGTH} characters "
            "(the server refuses longer tokens)"
        )
    if config.catalog_max_stale_seconds < 2:
        raise ConfigError("catalogMaxStaleSeconds: must be at least 2 (twice the poll interval)")
    if config.catalog_startup_wait_seconds < 0:
        raise ConfigError("catalogStartupWaitSeconds: must not be negative")
    if not 0 <= config.port <= 65535:
        raise ConfigError(f"port: {config.port} is not a TCP port")
    if config.admin is not None:
        _check_admin(config.admin, config.port)
    if config.audit.retention_days is not None and config.audit.retention_days <= 0:
        raise ConfigError("audit.retentionDays: must be positive (null keeps records for ever)")
    if config.audit.refusals_recorded < 0:
        raise ConfigError("audit.refusalsRecorded: must be 0 or more")
    if config.audit.refusal_window_seconds <= 0:
        raise ConfigError("audit.refusalWindowSeconds: must be positive")
    if config.audit.json_lines is not None and not config.audit.json_lines.strip():
        raise ConfigError("audit.jsonLines: give a file, or - for standard output")
    ssl = config.ssl
    if ssl and not ssl.self_signed and not (ssl.certificate_file and ssl.certificate_key_file):
        raise ConfigError(
            "ssl: set selfSigned: true, or both certificateFile and certificateKeyFile"
        )
    share_names: set[str] = set()
    for i, share in enumerate(config.shares):
        _check_name(share.name, f"shares[{i}].name", share_names)
        schema_names: set[str] = set()
        for j, schema in enumerate(share.schemas):
            _check_name(schema.name, f"shares[{i}].schemas[{j}].name", schema_names)
            table_names: set[str] = set()
            for k, table in enumerate(schema.tables):
                where = f"shares[{i}].schemas[{j}].tables[{k}]"
                _check_name(table.name, f"{where}.name", table_names)
                if not table.location.strip():
                    raise ConfigError(f"{where}.location: must not be empty")
                if is_relative_path(table.location):
                    raise ConfigError(
                        f"{where}.location: {table.location!r} is a relative path; give an "
                        "absolute path or a URI (a server does not depend on the directory "
                        "it was started from)"
                    )
                if table.start_version < 0:
                    raise ConfigError(f"{where}.startVersion: must not be negative")
                problem = access_problem(
                    table.location,
                    table.access_modes,
                    table.auxiliary_locations,
                    history_shared=table.shares_history,
                    start_version=table.start_version,
                    partition_filter=table.partition_filter,
                    settings_for=partial(
                        config.location_settings, table_options=table.storage_options
                    ),
                )
                if problem:
                    raise ConfigError(f"{where}.{problem}")
                if table.partition_filter is not None:
                    try:
                        check_filter(table.partition_filter, None)
                    except PartitionFilterError as exc:
                        raise ConfigError(f"{where}.partitionFilter: {exc}") from None


_HASHED_TOKEN = re.compile(r"sha256:[0-9a-fA-F]{64}")


def _check_admin(admin: AdminConfig, sharing_port: int) -> None:
    if not 0 <= admin.port <= 65535:
        raise ConfigError(f"admin.port: {admin.port} is not a TCP port")
    if admin.port != 0 and admin.port == sharing_port:
        raise ConfigError("admin.port: must differ from port (the sharing listener's)")
    if not admin.tokens:
        raise ConfigError("admin.tokens: give at least one admin token")
    for i, token in enumerate(admin.tokens):
        # the messages never quote a token
        if token.startswith("sha256:") and not _HASHED_TOKEN.fullmatch(token):
            raise ConfigError(f"admin.tokens[{i}]: sha256: must be followed by 64 hex digits")
        if len(token.strip()) < 16:
            raise ConfigError(f"admin.tokens[{i}]: an admin token needs 16 characters or more")
    if admin.session_seconds <= 0:
        raise ConfigError("admin.sessionSeconds: must be positive")
    if admin.diff_timeout_seconds <= 0:
        raise ConfigError("admin.diffTimeoutSeconds: must be positive")
    if admin.failed_auth_limit <= 0:
        raise ConfigError("admin.failedAuthLimit: must be positive")
    if admin.failed_auth_window_seconds <= 0:
        raise ConfigError("admin.failedAuthWindowSeconds: must be positive")


def _check_rate_limits(limits: RateLimitsConfig) -> None:
    if limits.failed_auth_limit <= 0:
        raise ConfigError("rateLimits.failedAuthLimit: must be positive")
    if limits.failed_auth_window_seconds <= 0:
        raise ConfigError("rateLimits.failedAuthWindowSeconds: must be positive")
    if limits.requests_per_second is None:
        if limits.burst is not None:
            raise ConfigError("rateLimits.burst: give requestsPerSecond too")
    else:
        _check_rate(RateConfig(limits.requests_per_second, limits.burst), "rateLimits")
    for name, rate in limits.recipients.items():
        _check_rate(rate, f"rateLimits.recipients.{name}")


def _check_rate(rate: RateConfig, where: str) -> None:
    if not math.isfinite(rate.requests_per_second) or rate.requests_per_second <= 0:
        raise ConfigError(f"{where}.requestsPerSecond: must be a positive number")
    if rate.burst is not None and rate.burst <= 0:
        raise ConfigError(f"{where}.burst: must be positive")


def _camel(key: str) -> str:
    first, *rest = key.split("_")
    return first + "".join(part.title() for part in rest)


def _check_name(name: str, where: str, seen: set[str]) -> None:
    problem = name_problem(name)
    if problem:
        raise ConfigError(f"{where}: {name!r} {problem}")
    key = name_key(name)
    if key in seen:
        raise ConfigError(f"{where}: {name!r} is defined twice (names are case-insensitive)")
    seen.add(key)
