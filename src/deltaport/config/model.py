"""Server configuration: YAML compatible with the reference Delta Sharing server, as
typed structs (read and checked by :mod:`deltaport.config.loading`)."""

from __future__ import annotations

from collections.abc import Mapping

import msgspec

from deltaport.catalog.recipient_access import (
    DEFAULT_LINK_LIFETIME,
    DEFAULT_MAX_ENTRIES,
)
from deltaport.catalog.rows import Details, TableSpec
from deltaport.catalog.tokens import DEFAULT_ACCESS_TOKEN_SECONDS
from deltaport.protocol.credentials import URL
from deltaport.storage.credentials import CredentialSettings

DEFAULT_ENDPOINT = "/delta-sharing"

# Keys of the reference server's configuration that deltaport accepts and does not need.
REFERENCE_KEYS_WITHOUT_EFFECT = frozenset(
    {
        "deltaTableCacheSize",
        "stalenessAcceptable",
        "evaluateJsonPredicateHintsV2",
        "requestTimeoutSeconds",
        "queryTablePageSizeLimit",
        "queryTablePageTokenTtlMs",
        "refreshTokenTtlMs",
        "useKernel",
    }
)


class ConfigError(ValueError):
    """The configuration file cannot be used; the message names the offending path."""


class _Config(msgspec.Struct, forbid_unknown_fields=True, rename="camel"):
    pass


class TableConfig(_Config):
    name: str
    location: str
    id: str | None = None
    history_shared: bool = False
    cdf_enabled: bool = False
    start_version: int = 0
    display_name: str | None = None
    comment: str | None = None
    properties: dict[str, str] | None = None
    storage_options: dict[str, str] | None = None
    access_modes: list[str] = msgspec.field(default_factory=lambda: [URL])
    auxiliary_locations: list[str] = msgspec.field(default_factory=list)
    partition_filter: str | None = None

    @property
    def shares_history(self) -> bool:
        """``cdfEnabled`` is the reference server's older name for ``historyShared``."""
        return self.history_shared or self.cdf_enabled

    @property
    def spec(self) -> TableSpec:
        """How the table is shared, as a catalog takes it."""
        return TableSpec(
            self.location,
            self.shares_history,
            self.start_version,
            self.partition_filter,
            tuple(self.access_modes),
            tuple(self.auxiliary_locations),
            self.comment,
            Details.of(self.display_name, self.properties),
        )


class SchemaConfig(_Config):
    name: str
    tables: list[TableConfig] = msgspec.field(default_factory=list)
    id: str | None = None
    display_name: str | None = None
    comment: str | None = None
    properties: dict[str, str] | None = None


class ShareConfig(_Config):
    name: str
    schemas: list[SchemaConfig] = msgspec.field(default_factory=list)
    id: str | None = None
    display_name: str | None = None
    comment: str | None = None
    properties: dict[str, str] | None = None


class AuthorizationConfig(_Config):
    bearer_token: str | None = None


class SSLConfig(_Config):
    self_signed: bool = False
    certificate_file: str | None = None
    certificate_key_file: str | None = None
    certificate_password_file: str | None = None


class StorageConfig(_Config):
    """obstore options for every table whose location starts with ``prefix``."""

    prefix: str
    options: dict[str, str] = msgspec.field(default_factory=dict)
    credentials: CredentialSettings | None = None


class AdminConfig(_Config):
    """The admin listener (admin API and console); off unless configured.

    ``tokens`` are admin tokens, each given as text (usually ``${VAR}``) or as
    ``sha256:<hex>`` of the token; only their hashes are kept once loaded. After
    ``failed_auth_limit`` failed sign-ins or bearer tokens from one client address within
    ``failed_auth_window_seconds``, that address is answered 429 until the window frees.
    """

    port: int
    tokens: list[str]
    host: str = "127.0.0.1"
    session_seconds: int = 3600
    diff_timeout_seconds: int = 60
    failed_auth_limit: int = 10
    failed_auth_window_seconds: int = 300


class RateConfig(_Config):
    """``requests_per_second`` sustained, up to ``burst`` at once (default: one second's)."""

    requests_per_second: float
    burst: int | None = None


class RateLimitsConfig(_Config):
    """Limits of the sharing listener: a request rate per recipient (off unless
    ``requests_per_second`` is set; ``recipients`` overrides it by recipient name), and
    ``failed_auth_limit`` failed bearer tokens per client address within
    ``failed_auth_window_seconds`` (then 429 until the window frees)."""

    requests_per_second: float | None = None
    burst: int | None = None
    recipients: dict[str, RateConfig] = msgspec.field(default_factory=dict)
    failed_auth_limit: int = 100
    failed_auth_window_seconds: int = 60


class AuditConfig(_Config):
    """The audit log (see docs/server/audit.md). ``database``: keep the records in the
    catalog database, when the server has one; ``json_lines``: also write them as JSON
    lines to this file, or to standard output (``-``); ``retention_days``: how long the
    database keeps them (null: for ever); ``refusals_recorded``: the refused requests of one
    client address kept whole in each ``refusal_window_seconds`` (the others summarised)."""

    database: bool = True
    json_lines: str | None = None
    retention_days: int | None = 365
    refusals_recorded: int = 10
    refusal_window_seconds: int = 60


class AsyncQueriesConfig(_Config):
    """Asynchronous queries (``asyncquery=true``, see docs/server/operating.md): each
    recipient may have ``maxPerRecipient`` at once and hold ``maxBytesPerRecipient`` bytes
    of prepared file lists; a query not polled for ``idleSeconds`` is dropped; ``workers``
    threads prepare them. ``enabled: false`` answers every query synchronously."""

    enabled: bool = True
    max_per_recipient: int = 16
    max_bytes_per_recipient: int = 1 << 30
    idle_seconds: int = 600
    workers: int = 2


class IcebergConfig(_Config):
    """The Iceberg REST catalog on the sharing listener (see docs/iceberg.md): served at
    ``path``; ``metadata_directory`` holds the Iceberg metadata made from the Delta logs
    (null: beside a SQLite catalog, else in the user's cache directory). Files no served
    version needs are removed once older than ``retain_hours``, by a sweep every
    ``cleanup_interval_minutes`` (0: only by ``deltaport iceberg cleanup``)."""

    enabled: bool = True
    path: str = "/iceberg"
    metadata_directory: str | None = None
    retain_hours: float = 24.0
    cleanup_interval_minutes: float = 60.0


DEFAULT_SNAPSHOT_CACHE_BYTES = 2 * 2**30
"""The one memory budget of the tables, snapshots and answers a server keeps (2 GiB)."""


class ServerConfig(_Config):
    version: int = 1
    shares: list[ShareConfig] = msgspec.field(default_factory=list)
    authorization: AuthorizationConfig | None = None
    ssl: SSLConfig | None = None
    host: str = "localhost"
    port: int = 8080
    endpoint: str = DEFAULT_ENDPOINT
    pre_signed_url_timeout_seconds: int = 3600
    evaluate_predicate_hints: bool = True
    evaluate_json_predicate_hints: bool = True
    storage: list[StorageConfig] = msgspec.field(default_factory=list)
    public_url: str | None = None
    signing_key: str | None = None
    access_log: bool = True
    max_request_body_bytes: int = 1024 * 1024
    max_predicate_hints: int = 100
    max_predicate_hint_length: int = 65536
    max_predicate_hint_depth: int = 64
    snapshot_cache_bytes: int = DEFAULT_SNAPSHOT_CACHE_BYTES
    shutdown_grace_seconds: int = 30
    drain_seconds: int = 0
    catalog: str | None = None
    catalog_max_stale_seconds: int = 30
    catalog_startup_wait_seconds: int = 60
    admin: AdminConfig | None = None
    audit: AuditConfig = msgspec.field(default_factory=AuditConfig)
    iceberg: IcebergConfig = msgspec.field(default_factory=IcebergConfig)
    trusted_proxies: list[str] = msgspec.field(default_factory=list)
    max_ip_access_list_entries: int = DEFAULT_MAX_ENTRIES
    activation_link_lifetime_seconds: int = int(DEFAULT_LINK_LIFETIME.total_seconds())
    oauth_access_token_lifetime_seconds: int = DEFAULT_ACCESS_TOKEN_SECONDS
    async_queries: AsyncQueriesConfig = msgspec.field(default_factory=AsyncQueriesConfig)
    rate_limits: RateLimitsConfig = msgspec.field(default_factory=RateLimitsConfig)

    def storage_options_for(self, table: TableConfig) -> dict[str, str]:
        """Options of the matching ``storage`` prefixes (longest last), then the table's own."""
        return self.location_settings(table.location, table.storage_options)[0]

    def location_settings(
        self, location: str, table_options: Mapping[str, str] | None = None
    ) -> tuple[dict[str, str], CredentialSettings]:
        """The storage options for ``location`` (matching ``storage`` prefixes, longest last,
        then the table's own ``table_options``) and the credential settings of the longest
        matching prefix that has them (for vending ``dir`` credentials and checking that
        they can be)."""
        matching = sorted(
            (s for s in self.storage if location.startswith(s.prefix)), key=lambda s: len(s.prefix)
        )
        options: dict[str, str] = {}
        settings = CredentialSettings()
        for entry in matching:
            options.update(entry.options)
            if entry.credentials is not None:
                settings = entry.credentials
        options.update(table_options or {})
        return options, settings
