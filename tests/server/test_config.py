"""Configuration loading: reference-compatible keys, env substitution, errors with paths."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from deltaport.config.loading import load_config, parse_config
from deltaport.config.model import ConfigError


def config_with_table(**table: Any) -> dict[str, Any]:
    entry = {"name": "t", "location": "/data/t", **table}
    return {"version": 1, "shares": [{"name": "s", "schemas": [{"name": "sc", "tables": [entry]}]}]}


def error_of(raw: Any, environ: dict[str, str] | None = None) -> str:
    with pytest.raises(ConfigError) as info:
        parse_config(raw, environ or {})
    return str(info.value)


def test_reference_server_config_loads(tmp_path: Path) -> None:
    path = tmp_path / "server.yaml"
    path.write_text(
        """
version: 1
shares:
- name: "share1"
  schemas:
  - name: "schema1"
    tables:
    - name: "table1"
      location: "s3a://bucket/table1"
      id: "00000000-0000-0000-0000-000000000000"
    - name: "table2"
      location: "file:///data/table2"
      cdfEnabled: true
      startVersion: 2
authorization:
  bearerToken: "token"
host: "localhost"
port: 8080
endpoint: "/delta-sharing"
preSignedUrlTimeoutSeconds: 900
deltaTableCacheSize: 10
stalenessAcceptable: false
evaluatePredicateHints: false
evaluateJsonPredicateHints: true
"""
    )
    config = load_config(path)
    assert config.port == 8080 and config.endpoint == "/delta-sharing"
    assert config.pre_signed_url_timeout_seconds == 900
    assert config.evaluate_predicate_hints is False
    assert config.authorization is not None and config.authorization.bearer_token == "token"
    table1, table2 = config.shares[0].schemas[0].tables
    assert table1.id == "00000000-0000-0000-0000-000000000000"
    assert not table1.shares_history
    assert table2.shares_history and table2.start_version == 2


def test_defaults() -> None:
    config = parse_config({}, {})
    assert (config.host, config.port, config.endpoint) == ("localhost", 8080, "/delta-sharing")
    assert config.shares == [] and config.authorization is None and config.ssl is None


def test_limits_have_defaults_and_must_be_positive() -> None:
    config = parse_config({}, {})
    assert config.max_request_body_bytes == 1024 * 1024
    assert (config.max_predicate_hints, config.max_predicate_hint_length) == (100, 65536)
    assert (config.max_predicate_hint_depth, config.shutdown_grace_seconds) == (64, 30)
    assert config.snapshot_cache_bytes == 2 * 2**30
    assert parse_config({"snapshotCacheBytes": 4096}, {}).snapshot_cache_bytes == 4096
    for key in (
        "maxRequestBodyBytes",
        "maxPredicateHints",
        "maxPredicateHintLength",
        "maxPredicateHintDepth",
        "snapshotCacheBytes",
    ):
        assert error_of({key: 0}) == f"{key}: must be positive"
    assert error_of({"shutdownGraceSeconds": -1}) == "shutdownGraceSeconds: must not be negative"
    assert parse_config({"shutdownGraceSeconds": 0}, {}).shutdown_grace_seconds == 0


def test_iceberg_cleanup_settings_have_defaults_and_must_not_be_negative() -> None:
    iceberg = parse_config({}, {}).iceberg
    assert (iceberg.retain_hours, iceberg.cleanup_interval_minutes) == (24, 60)
    for key in ("retainHours", "cleanupIntervalMinutes"):
        assert error_of({"iceberg": {key: -1}}) == f"iceberg.{key}: must not be negative"
        assert parse_config({"iceberg": {key: 0}}, {}) is not None


def test_async_query_bounds_have_defaults_and_must_be_positive() -> None:
    bounds = parse_config({}, {}).async_queries
    assert (bounds.enabled, bounds.max_per_recipient, bounds.idle_seconds) == (True, 16, 600)
    assert (bounds.max_bytes_per_recipient, bounds.workers) == (1 << 30, 2)
    for key in ("maxPerRecipient", "maxBytesPerRecipient", "idleSeconds", "workers"):
        assert error_of({"asyncQueries": {key: 0}}) == f"asyncQueries.{key}: must be positive"
    assert error_of({"asyncQueries": {"nope": 1}}) == "asyncQueries.nope: unknown key"


def test_the_catalog_staleness_bound_has_a_default_and_a_floor() -> None:
    assert parse_config({}, {}).catalog_max_stale_seconds == 30
    assert parse_config({"catalogMaxStaleSeconds": 2}, {}).catalog_max_stale_seconds == 2
    assert error_of({"catalogMaxStaleSeconds": 1}) == (
        "catalogMaxStaleSeconds: must be at least 2 (twice the poll interval)"
    )


def test_unknown_keys_are_reported_with_their_path() -> None:
    assert error_of(config_with_table(histroyShared=True)) == (
        "shares[0].schemas[0].tables[0].histroyShared: unknown key"
    )
    assert error_of({"verison": 1}) == "verison: unknown key"
    raw = {"shares": [{"name": "s", "schemas": [], "colour": "red"}]}
    assert error_of(raw) == "shares[0].colour: unknown key"


def test_wrong_types_and_missing_keys() -> None:
    message = error_of(config_with_table(historyShared="maybe"))
    assert message.startswith("shares[0].schemas[0].tables[0].historyShared:")
    message = error_of(
        {"shares": [{"name": "s", "schemas": [{"name": "sc", "tables": [{"name": "t"}]}]}]}
    )
    assert message.startswith("shares[0].schemas[0].tables[0]:") and "location" in message
    assert error_of({"port": "eighty"}).startswith("port:")
    assert error_of({"version": 2}).startswith("version:")
    assert error_of({"endpoint": "no-slash"}).startswith("endpoint:")
    assert error_of([1, 2]) == "config: the top level must be a mapping"


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("x" * 256, "at most 255"),
        ("", "must not be empty"),
        ("a.b", "'.'"),
        ("a/b", "'/'"),
        ("a b", "' '"),
        ("a#b", "'#'"),
        ("a\tb", "'\\t'"),
    ],
)
def test_invalid_names(name: str, fragment: str) -> None:
    message = error_of(config_with_table(name=name))
    assert message.startswith("shares[0].schemas[0].tables[0].name:")
    assert fragment in message


@pytest.mark.parametrize("name", ["x" * 255, "ventes_été-2024"])
def test_longest_valid_name_and_unicode(name: str) -> None:
    config = parse_config(config_with_table(name=name), {})
    assert config.shares[0].schemas[0].tables[0].name == name


def test_duplicate_names_case_insensitive() -> None:
    raw = {"shares": [{"name": "Sales"}, {"name": "sales"}]}
    assert error_of(raw).startswith("shares[1].name: 'sales' is defined twice")


def test_env_substitution() -> None:
    raw = {
        "authorization": {"bearerToken": "${TOKEN}"},
        **config_with_table(location="s3://${BUCKET}/t"),
    }
    config = parse_config(raw, {"TOKEN": "s3cret", "BUCKET": "b"})
    assert config.authorization is not None and config.authorization.bearer_token == "s3cret"
    assert config.shares[0].schemas[0].tables[0].location == "s3://b/t"
    message = error_of(raw, {"BUCKET": "b"})
    assert message == "authorization.bearerToken: environment variable TOKEN is not set"


def test_storage_options_merge_by_prefix() -> None:
    raw = config_with_table(location="s3://bucket/a/t", storageOptions={"aws_region": "eu-west-1"})
    raw["storage"] = [
        {
            "prefix": "s3://bucket/",
            "options": {"aws_endpoint": "http://minio:9000", "aws_region": "x"},
        },
        {"prefix": "s3://bucket/a/", "options": {"aws_access_key_id": "key"}},
        {"prefix": "s3://other/", "options": {"aws_access_key_id": "nope"}},
    ]
    config = parse_config(raw, {})
    table = config.shares[0].schemas[0].tables[0]
    assert config.storage_options_for(table) == {
        "aws_endpoint": "http://minio:9000",
        "aws_region": "eu-west-1",
        "aws_access_key_id": "key",
    }


def test_ssl_needs_files_or_self_signed() -> None:
    assert error_of({"ssl": {}}).startswith("ssl:")
    assert error_of({"ssl": {"certificateFile": "c.pem"}}).startswith("ssl:")
    parse_config({"ssl": {"selfSigned": True}}, {})


def test_server_refuses_a_bad_config_at_start(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("version: 1\nshares:\n- name: s\n  schemas:\n  - name: 'a.b'\n")
    result = subprocess.run(
        [sys.executable, "-m", "deltaport.server", "--config", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "shares[0].schemas[0].name" in result.stderr


ADMIN_HASH = "sha256:" + "ab" * 32


def test_the_admin_listener_is_off_unless_configured() -> None:
    assert parse_config({}, {}).admin is None


def test_admin_tokens_are_substituted_or_hashed() -> None:
    config = parse_config(
        {"admin": {"port": 9090, "tokens": ["${ADMIN}", ADMIN_HASH]}},
        {"ADMIN": "an-admin-token-of-some-length"},
    )
    assert config.admin is not None
    assert config.admin.host == "127.0.0.1"
    assert config.admin.tokens == ["an-admin-token-of-some-length", ADMIN_HASH]
    assert config.admin.session_seconds == 3600


@pytest.mark.parametrize(
    ("admin", "message"),
    [
        ({"port": 9090, "tokens": []}, "admin.tokens: give at least one"),
        ({"port": 9090, "tokens": ["short"]}, "admin.tokens[0]: an admin token needs 16"),
        ({"port": 9090, "tokens": ["sha256:abc"]}, "admin.tokens[0]: sha256: must be followed"),
        ({"port": 8080, "tokens": [ADMIN_HASH]}, "admin.port: must differ from port"),
        ({"port": 70000, "tokens": [ADMIN_HASH]}, "admin.port: 70000 is not a TCP port"),
        ({"port": 9090, "tokens": [ADMIN_HASH], "sessionSeconds": 0}, "admin.sessionSeconds"),
        ({"tokens": [ADMIN_HASH]}, "admin"),
    ],
)
def test_admin_problems_are_reported_without_the_token(
    admin: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config({"admin": admin}, {})
    assert message in str(info.value)
    assert "short" not in str(info.value).replace("admin.tokens[0]", "")


def test_a_bearer_token_the_server_would_refuse_is_a_config_error() -> None:
    raw = config_with_table() | {"authorization": {"bearerToken": "t" * 1025}}
    assert "authorization.bearerToken: longer than 1024 characters" in error_of(raw)
    raw["authorization"] = {"bearerToken": "t" * 1024}
    assert parse_config(raw, {}).authorization is not None
