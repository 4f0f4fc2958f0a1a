"""The catalog in a database (SQLite or PostgreSQL): shares, tables, recipients, tokens
and grants, changed by the provider's commands and read by every server.

Every change moves a generation counter and logs the items it changed in the same
transaction; servers poll the counter (see :mod:`deltaport.catalog.live`) and read what
changed when it moved, so a change reaches every replica within the poll interval.
"""

from __future__ import annotations

import hmac
import json
import sqlite3
import threading
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import timedelta

from deltaport.catalog.database.change_log import begin_change, end_change
from deltaport.catalog.database.connection import CatalogUrlError, Database, Transaction
from deltaport.catalog.database.migrations import migrate
from deltaport.catalog.limits import grace_problem, properties_problem, text_problem
from deltaport.catalog.recipient_access import (
    DEFAULT_MAX_ENTRIES,
    Access,
    ActivationLink,
    RecipientAccess,
    end_links,
    new_link,
    set_access,
)
from deltaport.catalog.rows import (
    KEEP,
    NO_DETAILS,
    CatalogConflictError,
    CatalogContents,
    CatalogNotFoundError,
    Details,
    IssuedToken,
    Keep,
    LastRows,
    ShareRow,
    TableRow,
    converted,
)
from deltaport.catalog.schemas import SchemaDetails
from deltaport.catalog.store_checks import check as _check
from deltaport.catalog.store_checks import check_endpoint as _check_endpoint
from deltaport.catalog.store_checks import check_lifetime as _check_lifetime
from deltaport.catalog.store_checks import check_name as _check_name
from deltaport.catalog.store_checks import check_table_fields
from deltaport.catalog.store_checks import expiry_text as expiry_text
from deltaport.catalog.store_checks import now_ms as _now
from deltaport.catalog.store_checks import seconds as _seconds
from deltaport.catalog.tokens import (
    AUTHENTICATION_TYPES,
    TOKEN,
    issue,
    revoke_all,
    rotation,
    token_hash,
)
from deltaport.protocol.credentials import URL
from deltaport.protocol.names import name_key


class SqlCatalog(RecipientAccess, SchemaDetails):
    def __init__(self, url: str, *, create: bool = True) -> None:
        """The catalog at ``url``; a missing SQLite file is created only with ``create`` (a
        server never creates one, except the embedded default on its first start)."""
        self.database = Database(url, create=create)
        try:
            migrate(self.database)
            key = self.database.query("SELECT value FROM deltaport_meta WHERE key = 'token_key'")
        except sqlite3.Error as exc:  # a read-only file, a file that is no database
            raise CatalogUrlError(f"the catalog database cannot be used: {exc}") from None
        self._token_key = bytes.fromhex(key[0][0])
        self._batch = threading.local()
        self._last_rows = LastRows({}, {}, {})

    # -- reading -------------------------------------------------------------------------
    def generation(self) -> int:
        rows = self.database.query("SELECT value FROM deltaport_meta WHERE key = 'generation'")
        return int(rows[0][0])

    def hash_token(self, token: str) -> str:
        return token_hash(self._token_key, token)

    def derived_key(self, purpose: str) -> bytes:
        """A key for ``purpose`` from the catalog's own (so the same on every replica)."""
        return hmac.digest(self._token_key, purpose.encode(), "sha256")

    def contents(self) -> CatalogContents:
        """Everything, from one read-only snapshot (no write lock taken)."""
        with self.database.read() as tx:
            generation = int(
                tx.execute("SELECT value FROM deltaport_meta WHERE key = 'generation'")[0][0]
            )
            shares = tx.execute(
                "SELECT name, id, comment, display_name, properties, schema_details FROM shares "
                "ORDER BY created_at, name"
            )
            tables = tx.execute(
                "SELECT s.name, t.schema_name, t.name, t.location, t.id, t.history_shared, "
                "t.start_version, t.partition_filter, t.access_modes, t.auxiliary_locations, "
                "t.comment, t.display_name, t.properties FROM shared_tables t "
                "JOIN shares s ON s.name_key = t.share_key ORDER BY t.ordinal"
            )
            recipients = tx.execute(
                "SELECT name_key, name, properties, endpoint, token_lifetime_seconds, comment, "
                "ip_access_list, authentication_type, expires_at FROM recipients"
            )
            grants = tx.execute("SELECT recipient_key, share_key FROM grants")
            tokens = tx.execute("SELECT hash, recipient_key, expires_at, revoked_at FROM tokens")
            clients = tx.execute(
                "SELECT client_id, secret_hash, recipient_key, expires_at, revoked_at "
                "FROM oauth_clients"
            )
        granted: dict[str, list[str]] = {}
        for recipient_key, share_key in grants:
            granted.setdefault(recipient_key, []).append(share_key)
        contents, self._last_rows = converted(
            self._last_rows, generation, shares, tables, recipients, granted, tokens, clients
        )
        return contents

    # -- shares and tables ---------------------------------------------------------------
    def create_share(
        self, name: str, comment: str | None = None, details: Details = NO_DETAILS
    ) -> ShareRow:
        _check_name(name, "share")
        _check("comment", text_problem(comment))
        details.check()
        row = ShareRow(name, str(uuid.uuid4()), comment, *details.fields)
        with self._change() as tx:
            if tx.execute("SELECT 1 FROM shares WHERE name_key = ?", (name_key(name),)):
                raise CatalogConflictError(f"share {name!r} exists already")
            tx.execute(
                "INSERT INTO shares (name_key, name, id, comment, created_at, display_name, "
                "properties) VALUES (?,?,?,?,?,?,?)",
                (name_key(name), name, row.id, comment, _now(), *details.columns),
            )
        return row

    def set_share_comment(self, name: str, comment: str | None) -> None:
        _check("comment", text_problem(comment))
        with self._change() as tx:
            tx.execute(
                "UPDATE shares SET comment = ? WHERE name_key = ?",
                (comment, self._share_key(tx, name)),
            )

    def drop_share(self, name: str) -> None:
        with self._change() as tx:
            self._share_key(tx, name)
            tx.execute("DELETE FROM shares WHERE name_key = ?", (name_key(name),))

    def add_table(
        self,
        share: str,
        schema: str,
        name: str,
        location: str,
        *,
        history_shared: bool = False,
        start_version: int = 0,
        partition_filter: str | None = None,
        access_modes: Sequence[str] = (URL,),
        auxiliary_locations: Sequence[str] = (),
        comment: str | None = None,
        details: Details = NO_DETAILS,
    ) -> TableRow:
        """Share a table. Its access modes are checked as far as they can be without the
        server's storage configuration (see :func:`~deltaport.catalog.access.access_problem`)."""
        _check_name(schema, "schema")
        _check_name(name, "table")
        _check("comment", text_problem(comment))
        details.check()
        check_table_fields(
            f"{share}.{schema}.{name}",
            location,
            access_modes,
            auxiliary_locations,
            history_shared=history_shared,
            start_version=start_version,
            partition_filter=partition_filter,
        )
        key = name_key(f"{share}.{schema}.{name}")
        row = TableRow(
            share,
            schema,
            name,
            location,
            str(uuid.uuid4()),
            history_shared,
            start_version,
            partition_filter,
            tuple(access_modes),
            tuple(auxiliary_locations),
            comment,
            *details.fields,
        )
        with self._change() as tx:
            share_key = self._share_key(tx, share)
            if tx.execute("SELECT 1 FROM shared_tables WHERE name_key = ?", (key,)):
                raise CatalogConflictError(f"table {share}.{schema}.{name} exists already")
            ordinal = tx.execute("SELECT COALESCE(MAX(ordinal), 0) + 1 FROM shared_tables")[0][0]
            tx.execute(
                "INSERT INTO shared_tables (name_key, share_key, schema_name, name, location, id, "
                "history_shared, start_version, partition_filter, access_modes, "
                "auxiliary_locations, ordinal, comment, display_name, properties) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                row.insert_values(key, share_key, ordinal),
            )
        return row

    def update_table(
        self,
        share: str,
        schema: str,
        name: str,
        *,
        history_shared: bool,
        start_version: int,
        partition_filter: str | None,
        comment: str | None,
    ) -> None:
        """Change how a shared table is read, keeping its id, location and access modes;
        checked as :meth:`add_table` checks a new one."""
        key = name_key(f"{share}.{schema}.{name}")
        _check("comment", text_problem(comment))
        with self._change() as tx:
            found = tx.execute(
                "SELECT location, access_modes, auxiliary_locations FROM shared_tables "
                "WHERE name_key = ?",
                (key,),
            )
            if not found:
                raise CatalogNotFoundError(f"no table {share}.{schema}.{name}")
            location, modes, auxiliary = (
                found[0][0],
                json.loads(found[0][1]),
                json.loads(found[0][2]),
            )
            check_table_fields(
                f"{share}.{schema}.{name}",
                location,
                modes,
                auxiliary,
                history_shared=history_shared,
                start_version=start_version,
                partition_filter=partition_filter,
            )
            tx.execute(
                "UPDATE shared_tables SET history_shared = ?, start_version = ?, "
                "partition_filter = ?, comment = ? WHERE name_key = ?",
                (int(history_shared), start_version, partition_filter, comment, key),
            )

    def remove_table(self, share: str, schema: str, name: str) -> None:
        key = name_key(f"{share}.{schema}.{name}")
        with self._change() as tx:
            if not tx.execute("SELECT 1 FROM shared_tables WHERE name_key = ?", (key,)):
                raise CatalogNotFoundError(f"no table {share}.{schema}.{name}")
            tx.execute("DELETE FROM shared_tables WHERE name_key = ?", (key,))
            self.forget_empty_schemas(tx, name_key(share))

    # -- recipients and tokens -----------------------------------------------------------
    def create_recipient(
        self,
        name: str,
        properties: Mapping[str, str] | None = None,
        expires_in: timedelta | None = None,
        endpoint: str | None = None,
        comment: str | None = None,
        *,
        ip_access_list: Sequence[str] = (),
        max_ip_entries: int = DEFAULT_MAX_ENTRIES,
        authentication_type: str = TOKEN,
    ) -> IssuedToken:
        """A recipient and its first credential (a token, or an OAuth client): ``expires_in``
        becomes its lifetime and ``endpoint`` where its profiles point (see :meth:`rotate`);
        requests from outside ``ip_access_list`` (when not empty) are refused."""
        access = Access(ip_access_list, max_ip_entries, authentication_type)
        made = self._create(name, properties, expires_in, endpoint, comment, access, None)
        assert isinstance(made, IssuedToken)
        return made

    def _create(
        self,
        name: str,
        properties: Mapping[str, str] | None,
        expires_in: timedelta | None,
        endpoint: str | None,
        comment: str | None,
        access: Access,
        link_lifetime: timedelta | None,
    ) -> IssuedToken | ActivationLink:
        """A recipient and its first credential, or (with ``link_lifetime``) its link."""
        _check("properties", properties_problem(properties or {}))
        _check("comment", text_problem(comment))
        _check_lifetime(expires_in)
        _check_endpoint(endpoint)
        with self._change() as tx:
            self._insert_recipient(tx, name, properties or {}, endpoint, expires_in, comment)
            set_access(tx, name, access, AUTHENTICATION_TYPES)
            if link_lifetime is not None:
                return new_link(tx, self.hash_token, name, link_lifetime, endpoint or "")
            return self._issue(tx, name, expires_in, endpoint)

    def update_recipient(
        self,
        name: str,
        *,
        properties: Mapping[str, str] | None = None,
        comment: str | Keep | None = KEEP,
    ) -> None:
        """Replace the recipient's properties (when given) and its comment (unless KEEP)."""
        if properties is not None:
            _check("properties", properties_problem(properties))
        if comment is not KEEP:
            _check("comment", text_problem(comment))
        with self._change() as tx:
            key = self._recipient_key(tx, name)
            if properties is not None:
                tx.execute(
                    "UPDATE recipients SET properties = ? WHERE name_key = ?",
                    (json.dumps(dict(properties)), key),
                )
            if comment is not KEEP:
                tx.execute("UPDATE recipients SET comment = ? WHERE name_key = ?", (comment, key))

    def import_recipient(self, name: str, token: str, shares: list[str]) -> None:
        """A recipient holding an existing token (a YAML bearer token being imported),
        granted ``shares``."""
        with self._change() as tx:
            self._insert_recipient(tx, name, {}, None, None)
            tx.execute(
                "INSERT INTO tokens (hash, recipient_key, created_at) VALUES (?,?,?)",
                (self.hash_token(token), name_key(name), _now()),
            )
            for share in shares:
                tx.execute(
                    "INSERT INTO grants (share_key, recipient_key, created_at) VALUES (?,?,?)",
                    (self._share_key(tx, share), name_key(name), _now()),
                )

    def rotate(
        self,
        name: str,
        old_valid_for: timedelta,
        expires_in: timedelta | Keep | None = KEEP,
        *,
        endpoint: str | None = None,
        default_endpoint: str | None = None,
    ) -> IssuedToken:
        """A new token; the recipient's current ones stay valid ``old_valid_for`` more (zero:
        they end now). The new token lives as long as the recipient's tokens do unless
        ``expires_in`` says otherwise (None: no expiry), which then becomes the recipient's
        lifetime. Its profile points to ``endpoint`` if given, else where the recipient's
        last profile pointed, else to ``default_endpoint``; that becomes the recipient's. An
        unused activation link of the recipient ends now (it would issue a second token)."""
        made = self._rotate(name, old_valid_for, expires_in, endpoint, default_endpoint, None)
        assert isinstance(made, IssuedToken)
        return made

    def _rotate(
        self,
        name: str,
        old_valid_for: timedelta,
        expires_in: timedelta | Keep | None,
        endpoint: str | None,
        default_endpoint: str | None,
        link_lifetime: timedelta | None,
    ) -> IssuedToken | ActivationLink:
        """A rotation (see :meth:`rotate`) ending in a token or (``link_lifetime``) a link."""
        _check("the grace period", grace_problem(old_valid_for.total_seconds()))
        _check_lifetime(expires_in if isinstance(expires_in, timedelta) else None)
        _check_endpoint(endpoint)
        _check_endpoint(default_endpoint)
        with self._change() as tx:
            lifetime, points_to = rotation(
                tx, name, old_valid_for, expires_in, endpoint, default_endpoint
            )
            end_links(tx, name)
            if link_lifetime is not None:
                return new_link(tx, self.hash_token, name, link_lifetime, points_to or "")
            return self._issue(tx, name, lifetime, points_to)

    def revoke(self, name: str) -> None:
        """End every token of the recipient now."""
        with self._change() as tx:
            self._recipient_key(tx, name)
            revoke_all(tx, name)

    def drop_recipient(self, name: str) -> None:
        with self._change() as tx:
            self._recipient_key(tx, name)
            tx.execute("DELETE FROM recipients WHERE name_key = ?", (name_key(name),))

    # -- grants --------------------------------------------------------------------------
    def grant(self, share: str, recipient: str) -> None:
        with self._change() as tx:
            share_key = self._share_key(tx, share)
            recipient_key = self._recipient_key(tx, recipient)
            if not tx.execute(
                "SELECT 1 FROM grants WHERE share_key = ? AND recipient_key = ?",
                (share_key, recipient_key),
            ):
                tx.execute(
                    "INSERT INTO grants (share_key, recipient_key, created_at) VALUES (?,?,?)",
                    (share_key, recipient_key, _now()),
                )

    def revoke_grant(self, share: str, recipient: str) -> None:
        with self._change() as tx:
            share_key = self._share_key(tx, share)
            recipient_key = self._recipient_key(tx, recipient)
            tx.execute(
                "DELETE FROM grants WHERE share_key = ? AND recipient_key = ?",
                (share_key, recipient_key),
            )

    @contextmanager
    def batch(self) -> Iterator[None]:
        """The changes made inside, in this thread, all happen or none does (one
        transaction: ``catalog import`` leaves nothing behind when a share fails)."""
        with self._change() as tx:
            self._batch.tx = tx
            try:
                yield
            finally:
                self._batch.tx = None

    # -- helpers -------------------------------------------------------------------------
    def _change(self) -> AbstractContextManager[Transaction]:
        outer: Transaction | None = getattr(self._batch, "tx", None)
        return nullcontext(outer) if outer is not None else _changing(self.database)

    @staticmethod
    def _insert_recipient(
        tx: Transaction,
        name: str,
        properties: Mapping[str, str],
        endpoint: str | None,
        lifetime: timedelta | None,
        comment: str | None = None,
    ) -> None:
        _check_name(name, "recipient")
        if tx.execute("SELECT 1 FROM recipients WHERE name_key = ?", (name_key(name),)):
            raise CatalogConflictError(f"recipient {name!r} exists already")
        tx.execute(
            "INSERT INTO recipients (name_key, name, properties, created_at, endpoint, "
            "token_lifetime_seconds, comment) VALUES (?,?,?,?,?,?,?)",
            (
                name_key(name),
                name,
                json.dumps(dict(properties)),
                _now(),
                endpoint,
                _seconds(lifetime),
                comment,
            ),
        )

    def _issue(
        self, tx: Transaction, name: str, expires_in: timedelta | None, endpoint: str | None
    ) -> IssuedToken:
        return issue(tx, self.hash_token, name, expires_in, endpoint)

    @staticmethod
    def _share_key(tx: Transaction, name: str) -> str:
        if not tx.execute("SELECT 1 FROM shares WHERE name_key = ?", (name_key(name),)):
            raise CatalogNotFoundError(f"no share {name!r}")
        return name_key(name)

    @staticmethod
    def _recipient_key(tx: Transaction, name: str) -> str:
        if not tx.execute("SELECT 1 FROM recipients WHERE name_key = ?", (name_key(name),)):
            raise CatalogNotFoundError(f"no recipient {name!r}")
        return name_key(name)


@contextmanager
def _changing(database: Database) -> Iterator[Transaction]:
    """A write transaction that moves the generation counter first (the change log rows
    its triggers write carry the new generation: :mod:`deltaport.catalog.database.change_log`)."""
    with database.transaction() as tx:
        generation = begin_change(tx)
        yield tx
        end_change(tx, generation)
