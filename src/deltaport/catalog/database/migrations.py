"""The catalog's database schema, one migration per version, applied in order on start.

A database records its schema version in ``deltaport_meta``; an older database is
upgraded step by step (each step in its own transaction), a newer one (written by a later
deltaport) is refused rather than used, and nothing is ever dropped and recreated.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable

from deltaport.catalog.database import change_log
from deltaport.catalog.database.connection import Database, Transaction

Migration = tuple[str, ...] | Callable[[str], tuple[str, ...]]
"""A migration's statements, or a function of the database's kind giving them (when
SQLite and PostgreSQL need different ones)."""

MIGRATIONS: tuple[Migration, ...] = (
    (
        "CREATE TABLE deltaport_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        """CREATE TABLE shares (
            name_key TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            id TEXT NOT NULL,
            comment TEXT,
            created_at BIGINT NOT NULL)""",
        """CREATE TABLE shared_tables (
            name_key TEXT PRIMARY KEY,
            share_key TEXT NOT NULL REFERENCES shares(name_key) ON DELETE CASCADE,
            schema_name TEXT NOT NULL,
            name TEXT NOT NULL,
            location TEXT NOT NULL,
            id TEXT NOT NULL,
            history_shared BIGINT NOT NULL,
            start_version BIGINT NOT NULL,
            partition_filter TEXT,
            ordinal BIGINT NOT NULL)""",
        """CREATE TABLE recipients (
            name_key TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            properties TEXT NOT NULL,
            created_at BIGINT NOT NULL)""",
        """CREATE TABLE tokens (
            hash TEXT PRIMARY KEY,
            recipient_key TEXT NOT NULL REFERENCES recipients(name_key) ON DELETE CASCADE,
            created_at BIGINT NOT NULL,
            expires_at BIGINT,
            revoked_at BIGINT)""",
        """CREATE TABLE grants (
            share_key TEXT NOT NULL REFERENCES shares(name_key) ON DELETE CASCADE,
            recipient_key TEXT NOT NULL REFERENCES recipients(name_key) ON DELETE CASCADE,
            created_at BIGINT NOT NULL,
            PRIMARY KEY (share_key, recipient_key))""",
    ),
    # 2: how a table may be read (JSON lists: ["url"], ["url", "dir"]; locations)
    (
        """ALTER TABLE shared_tables
            ADD COLUMN access_modes TEXT NOT NULL DEFAULT '["url"]'""",
        """ALTER TABLE shared_tables
            ADD COLUMN auxiliary_locations TEXT NOT NULL DEFAULT '[]'""",
    ),
    # 3: where a recipient's last profile pointed, and how long its tokens live (seconds;
    # NULL: no expiry), so that a rotation keeps both; an existing recipient's lifetime is
    # that of its newest token
    (
        "ALTER TABLE recipients ADD COLUMN endpoint TEXT",
        "ALTER TABLE recipients ADD COLUMN token_lifetime_seconds BIGINT",
        """UPDATE recipients SET token_lifetime_seconds = (
            SELECT (t.expires_at - t.created_at + 500) / 1000 FROM tokens t
            WHERE t.recipient_key = recipients.name_key
            ORDER BY t.created_at DESC LIMIT 1)""",
    ),
    # 4: a comment on a recipient and on a shared table (the provider API in Unity
    # Catalog's shape carries both)
    (
        "ALTER TABLE recipients ADD COLUMN comment TEXT",
        "ALTER TABLE shared_tables ADD COLUMN comment TEXT",
    ),
    # 5: the audit log (deltaport.observe): one row a request, paged newest first by time
    # (ties broken by id), filtered through an index by recipient, table, operation or
    # status (a rare value found without walking the whole log)
    (
        """CREATE TABLE audit_records (
            id TEXT PRIMARY KEY,
            time_ms BIGINT NOT NULL,
            operation TEXT NOT NULL,
            status BIGINT NOT NULL,
            duration_ms BIGINT NOT NULL,
            recipient TEXT,
            admin TEXT,
            client_address TEXT,
            user_agent TEXT,
            share TEXT,
            table_name TEXT,
            target TEXT,
            version BIGINT,
            end_version BIGINT,
            files BIGINT,
            bytes BIGINT,
            error_code TEXT)""",
        "CREATE INDEX audit_records_time ON audit_records (time_ms, id)",
        "CREATE INDEX audit_records_recipient ON audit_records (recipient, time_ms, id)",
        "CREATE INDEX audit_records_table ON audit_records (table_name, time_ms, id)",
        "CREATE INDEX audit_records_operation ON audit_records (operation, time_ms, id)",
        "CREATE INDEX audit_records_status ON audit_records (status, time_ms, id)",
    ),
    # 6: recipients' IP access lists (a JSON list of addresses and CIDR ranges; empty:
    # anywhere), their single-use activation links (kept as keyed hashes), how they
    # authenticate (TOKEN or OAUTH_CLIENT_CREDENTIALS) and their OAuth clients (secrets kept
    # as keyed hashes)
    (
        "ALTER TABLE recipients ADD COLUMN ip_access_list TEXT NOT NULL DEFAULT '[]'",
        "ALTER TABLE recipients ADD COLUMN authentication_type TEXT NOT NULL DEFAULT 'TOKEN'",
        """CREATE TABLE oauth_clients (
            client_id TEXT PRIMARY KEY,
            secret_hash TEXT NOT NULL,
            recipient_key TEXT NOT NULL REFERENCES recipients(name_key) ON DELETE CASCADE,
            created_at BIGINT NOT NULL,
            expires_at BIGINT,
            revoked_at BIGINT)""",
        """CREATE TABLE activation_links (
            hash TEXT PRIMARY KEY,
            recipient_key TEXT NOT NULL REFERENCES recipients(name_key) ON DELETE CASCADE,
            created_at BIGINT NOT NULL,
            expires_at BIGINT NOT NULL,
            used_at BIGINT)""",
    ),
    # 7: the change log (deltaport.catalog.database.change_log): which shares, tables and
    # recipients each generation changed, written by triggers in the change's transaction,
    # so that servers read only what changed; and indexes for reading one recipient's rows
    change_log.migration,
    # 8: the console's overview of the audit log: requests, bytes and errors of the last
    # day read from one index alone, and the newest errors found without walking the
    # successes
    (
        "CREATE INDEX audit_records_volume ON audit_records (time_ms, status, bytes)",
        "CREATE INDEX audit_records_errors ON audit_records (time_ms, id) WHERE status >= 400",
    ),
    # 9: a display name and properties (JSON) on shares and shared tables, which recipients
    # see in listings (the protocol's displayName, properties)
    (
        "ALTER TABLE shares ADD COLUMN display_name TEXT",
        "ALTER TABLE shares ADD COLUMN properties TEXT NOT NULL DEFAULT '{}'",
        "ALTER TABLE shared_tables ADD COLUMN display_name TEXT",
        "ALTER TABLE shared_tables ADD COLUMN properties TEXT NOT NULL DEFAULT '{}'",
    ),
    # 10: when a recipient ends (ms since the epoch; NULL: never): no credential issued to it
    # lives past it, whatever its tokens' lifetime (Unity Catalog's absolute expiration_time)
    ("ALTER TABLE recipients ADD COLUMN expires_at BIGINT",),
    # 11: how many refused requests an audit record summarises (a storm from one address,
    # deltaport.observe.audit_storms)
    ("ALTER TABLE audit_records ADD COLUMN request_count BIGINT",),
    # 12: what recipients see of a share's schemas besides their names (a JSON object: the
    # schema's name key -> its displayName, comment and properties), kept on the share's
    # row: a schema exists through its tables, and a change of it is logged as its share's
    ("ALTER TABLE shares ADD COLUMN schema_details TEXT NOT NULL DEFAULT '{}'",),
)
SCHEMA_VERSION = len(MIGRATIONS)


class CatalogSchemaError(RuntimeError):
    """The database holds a catalog of a newer deltaport, or something else entirely."""


def migrate(database: Database) -> int:
    """Bring the database to :data:`SCHEMA_VERSION`; returns the version it had."""
    with database.transaction() as tx:
        found = _version(tx, database.kind)
    if found > SCHEMA_VERSION:
        raise CatalogSchemaError(
            f"the catalog database is at schema version {found}, newer than this deltaport's "
            f"{SCHEMA_VERSION}: upgrade deltaport"
        )
    for version in range(found + 1, SCHEMA_VERSION + 1):
        with database.transaction() as tx:
            if _version(tx, database.kind) >= version:
                continue  # another process upgraded meanwhile
            step = MIGRATIONS[version - 1]
            for statement in step(database.kind) if callable(step) else step:
                tx.execute(statement)
            if version == 1:
                for key, value in (
                    ("schema_version", "0"),
                    ("generation", "0"),
                    ("token_key", secrets.token_hex(32)),
                ):
                    tx.execute(
                        "INSERT INTO deltaport_meta (key, value) VALUES (?, ?)", (key, value)
                    )
            tx.execute(
                "UPDATE deltaport_meta SET value = ? WHERE key = 'schema_version'", (str(version),)
            )
    return found


def _version(tx: Transaction, kind: str) -> int:
    if kind == "sqlite":
        rows = tx.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    else:
        rows = tx.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        )
    tables = {str(r[0]) for r in rows}
    if "deltaport_meta" not in tables:
        if tables - {"sqlite_sequence"}:
            raise CatalogSchemaError(
                "the database holds tables but no deltaport catalog; use an empty database"
            )
        return 0
    found = tx.execute("SELECT value FROM deltaport_meta WHERE key = 'schema_version'")
    return int(found[0][0]) if found else 0
