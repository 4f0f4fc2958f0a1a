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
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import timedelta

from deltaport.catalog.database.change_log import changing
from deltaport.catalog.database.connection import CatalogUrlError, Database, Transaction
from deltaport.catalog.database.migrations import migrate
from deltaport.catalog.limits import grace_problem, properties_problem, text_problem
from deltaport.catalog.recipient_access import (
    DEFAULT_LINK_LIFETIME,
    DEFAULT_MAX_ENTRIES,
    ActivationLink,
    LinkedRecipient,
    checked_ip_access_list,
    end_links,
    insert_recipient,
    new_link,
    presented_link,
    set_access,
    unused_link,
    unused_links,
    use_link,
)
from deltaport.catalog.rows import (
    NEW,
    NO_DETAILS,
    CatalogContents,
    CatalogError,
    CatalogNotFoundError,
    Details,
    IssuedToken,
    Keep,
    LastRows,
    RecipientChange,
    RecipientSpec,
    RotationSpec,
    SchemaDetails,
    SchemaRow,
    ShareRow,
    TableRow,
    TableSpec,
    insert_new,
    read_contents,
)
from deltaport.catalog.schemas import forget_empty_schemas, set_details
from deltaport.catalog.store_checks import check as _check
from deltaport.catalog.store_checks import check_endpoint as _check_endpoint
from deltaport.catalog.store_checks import check_lifetime as _check_lifetime
from deltaport.catalog.store_checks import check_name as _check_name
from deltaport.catalog.store_checks import check_table_fields
from deltaport.catalog.store_checks import expiry_text as expiry_text
from deltaport.catalog.store_checks import now_ms as _now
from deltaport.catalog.tokens import (
    AUTHENTICATION_TYPES,
    issue,
    revoke_all,
    rotation,
    token_hash,
)
from deltaport.protocol.names import name_key


class SqlCatalog:
    """The catalog in a database; see :class:`~deltaport.catalog.provider.catalog.Catalog`
    for what a provider asks of it. Besides, what a server asks: the generation, token
    hashes, activation, batches of changes in one transaction."""

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
            contents, self._last_rows = read_contents(tx, self._last_rows)
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
            insert_new(
                tx,
                "INSERT INTO shares (name_key, name, id, comment, created_at, display_name, "
                "properties) VALUES (?,?,?,?,?,?,?)",
                (name_key(name), name, row.id, comment, _now(), *details.columns),
                f"share {name!r} exists already",
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

    def add_table(self, share: str, schema: str, name: str, spec: TableSpec) -> TableRow:
        """Share a table. Its access modes are checked as far as they can be without the
        server's storage configuration (see :func:`~deltaport.catalog.access.access_problem`)."""
        _check_name(schema, "schema")
        _check_name(name, "table")
        check_table_fields(f"{share}.{schema}.{name}", spec)
        key = name_key(f"{share}.{schema}.{name}")
        row = TableRow.shared(share, schema, name, str(uuid.uuid4()), spec)
        with self._change() as tx:
            share_key = self._share_key(tx, share)
            ordinal = tx.execute("SELECT COALESCE(MAX(ordinal), 0) + 1 FROM shared_tables")[0][0]
            insert_new(
                tx,
                "INSERT INTO shared_tables (name_key, share_key, schema_name, name, location, id, "
                "history_shared, start_version, partition_filter, access_modes, "
                "auxiliary_locations, ordinal, comment, display_name, properties) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                row.insert_values(key, share_key, ordinal),
                f"table {share}.{schema}.{name} exists already",
            )
        return row

    def update_table(self, share: str, schema: str, name: str, spec: TableSpec) -> None:
        """Change how a shared table is read (history, start version, partition filter,
        comment), checked as :meth:`add_table` checks a new one. Its id, location, access
        modes and details stay: a ``spec`` that changes those is refused."""
        key = name_key(f"{share}.{schema}.{name}")
        with self._change() as tx:
            found = tx.execute(
                "SELECT location, access_modes, auxiliary_locations, display_name, properties "
                "FROM shared_tables WHERE name_key = ?",
                (key,),
            )
            if not found:
                raise CatalogNotFoundError(f"no table {share}.{schema}.{name}")
            kept = (
                found[0][0],
                tuple(json.loads(found[0][1])),
                tuple(json.loads(found[0][2])),
                Details(found[0][3], tuple(json.loads(found[0][4]).items())),
            )
            given = spec.location, tuple(spec.access_modes), tuple(spec.auxiliary_locations)
            if (*given, spec.details) != kept:
                raise CatalogError(
                    f"table {share}.{schema}.{name}: its location, access modes and details "
                    "do not change; remove it and share it again"
                )
            check_table_fields(f"{share}.{schema}.{name}", spec)
            tx.execute(
                "UPDATE shared_tables SET history_shared = ?, start_version = ?, "
                "partition_filter = ?, comment = ? WHERE name_key = ?",
                (
                    int(spec.history_shared),
                    spec.start_version,
                    spec.partition_filter,
                    spec.comment,
                    key,
                ),
            )

    def remove_table(self, share: str, schema: str, name: str) -> None:
        key = name_key(f"{share}.{schema}.{name}")
        with self._change() as tx:
            if not tx.execute("SELECT 1 FROM shared_tables WHERE name_key = ?", (key,)):
                raise CatalogNotFoundError(f"no table {share}.{schema}.{name}")
            tx.execute("DELETE FROM shared_tables WHERE name_key = ?", (key,))
            forget_empty_schemas(tx, name_key(share))

    def set_schema_details(self, share: str, schema: str, given: SchemaDetails) -> SchemaRow:
        """Replace what is ``given`` of the schema ``share.schema`` (see
        :func:`~deltaport.catalog.schemas.set_details`); returns what it has then."""
        with self._change() as tx:
            self._share_key(tx, share)
            return set_details(tx, share, schema, given)

    # -- recipients and tokens -----------------------------------------------------------
    def create_recipient(
        self, name: str, spec: RecipientSpec = NEW, *, max_ip_entries: int = DEFAULT_MAX_ENTRIES
    ) -> IssuedToken:
        """A recipient and its first credential (a token, or an OAuth client): the spec's
        token lifetime becomes its lifetime and its endpoint where its profiles point (see
        :meth:`rotate`); requests from outside its IP access list (when not empty) are
        refused."""
        with self._creating(name, spec, max_ip_entries) as tx:
            return self._issue(tx, name, spec.token_lifetime, spec.endpoint)

    def create_recipient_with_link(
        self,
        name: str,
        spec: RecipientSpec = NEW,
        *,
        link_lifetime: timedelta = DEFAULT_LINK_LIFETIME,
        max_ip_entries: int = DEFAULT_MAX_ENTRIES,
    ) -> ActivationLink:
        """A recipient without a credential yet, and the activation link whose first
        download issues it; the spec's ``expires_at`` ends the recipient: no credential of
        it (its link, its tokens after activation or any rotation) lives past it."""
        with self._creating(name, spec, max_ip_entries) as tx:
            return new_link(tx, self.hash_token, name, link_lifetime, spec.endpoint or "")

    @contextmanager
    def _creating(
        self, name: str, spec: RecipientSpec, max_ip_entries: int
    ) -> Iterator[Transaction]:
        """The change that writes a new recipient, open for its first credential."""
        _check("properties", properties_problem(spec.properties))
        _check("comment", text_problem(spec.comment))
        _check_lifetime(spec.token_lifetime)
        _check_endpoint(spec.endpoint)
        _check_name(name, "recipient")
        with self._change() as tx:
            insert_recipient(tx, name, spec)
            set_access(tx, name, spec, max_ip_entries, AUTHENTICATION_TYPES)
            yield tx

    def update_recipient(
        self, name: str, change: RecipientChange, *, max_ip_entries: int = DEFAULT_MAX_ENTRIES
    ) -> None:
        """Replace what the change gives (KEEP: kept), in one transaction."""
        properties, comment, entries = change.properties, change.comment, change.ip_access_list
        if not isinstance(properties, Keep):
            _check("properties", properties_problem(properties))
        if not isinstance(comment, Keep):
            _check("comment", text_problem(comment))
        stored = (
            None if isinstance(entries, Keep) else checked_ip_access_list(entries, max_ip_entries)
        )
        with self._change() as tx:
            key = self._recipient_key(tx, name)
            if not isinstance(properties, Keep):
                tx.execute(
                    "UPDATE recipients SET properties = ? WHERE name_key = ?",
                    (json.dumps(dict(properties)), key),
                )
            if not isinstance(comment, Keep):
                tx.execute("UPDATE recipients SET comment = ? WHERE name_key = ?", (comment, key))
            if stored is not None:
                tx.execute(
                    "UPDATE recipients SET ip_access_list = ? WHERE name_key = ?",
                    (json.dumps(list(stored)), key),
                )

    def import_recipient(self, name: str, token: str, shares: list[str]) -> None:
        """A recipient holding an existing token (a YAML bearer token being imported),
        granted ``shares``."""
        with self._change() as tx:
            _check_name(name, "recipient")
            insert_recipient(tx, name, NEW)
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
        self, name: str, rotation: RotationSpec, *, default_endpoint: str | None = None
    ) -> IssuedToken:
        """A new token; the recipient's current ones stay valid ``rotation.old_valid_for``
        more. The new token lives as long as the recipient's tokens do unless
        ``rotation.expires_in`` says otherwise, which then becomes the recipient's lifetime.
        Its profile points to ``rotation.endpoint`` if given, else where the recipient's
        last profile pointed, else to ``default_endpoint``; that becomes the recipient's. An
        unused activation link of the recipient ends now (it would issue a second token)."""
        with self._rotating(name, rotation, default_endpoint) as (
            tx,
            lifetime,
            points_to,
        ):
            return self._issue(tx, name, lifetime, points_to)

    def rotate_with_link(
        self,
        name: str,
        old_valid_for: timedelta,
        *,
        default_endpoint: str | None = None,
        link_lifetime: timedelta = DEFAULT_LINK_LIFETIME,
    ) -> ActivationLink:
        """A rotation (see :meth:`rotate`, the new token keeping the recipient's lifetime
        and endpoint) whose new credential is issued by the first download of the link it
        answers."""
        with self._rotating(name, RotationSpec(old_valid_for), default_endpoint) as (tx, _, to):
            return new_link(tx, self.hash_token, name, link_lifetime, to or "")

    @contextmanager
    def _rotating(
        self, name: str, spec: RotationSpec, default_endpoint: str | None
    ) -> Iterator[tuple[Transaction, timedelta | None, str | None]]:
        """The change of a rotation (see :meth:`rotate`), open for the new credential: with
        the lifetime it gets and where its profile points."""
        _check("the grace period", grace_problem(spec.old_valid_for.total_seconds()))
        _check_lifetime(spec.expires_in if isinstance(spec.expires_in, timedelta) else None)
        _check_endpoint(spec.endpoint)
        _check_endpoint(default_endpoint)
        with self._change() as tx:
            lifetime, points_to = rotation(
                tx, name, spec.old_valid_for, spec.expires_in, spec.endpoint, default_endpoint
            )
            end_links(tx, name)
            yield tx, lifetime, points_to

    def revoke(self, name: str) -> None:
        """End every token of the recipient now."""
        with self._change() as tx:
            self._recipient_key(tx, name)
            revoke_all(tx, name)

    def drop_recipient(self, name: str) -> None:
        with self._change() as tx:
            self._recipient_key(tx, name)
            tx.execute("DELETE FROM recipients WHERE name_key = ?", (name_key(name),))

    # -- activation links and IP access lists ----------------------------------------------
    def unused_links(self) -> dict[str, int]:
        """The recipients (name keys) with an unused, unexpired link, each with when its
        last one expires (milliseconds since the epoch)."""
        return unused_links(self.database)

    def activate(self, link: str, admit: Callable[[LinkedRecipient], None]) -> IssuedToken:
        """Use an activation link: its recipient's first credential. ``admit`` may refuse
        (by raising) before the link is used up; an unknown, used or expired link raises
        :class:`CatalogNotFoundError`."""
        hashed = self.hash_token(presented_link(link))
        with self._change() as tx:
            linked = unused_link(tx, hashed)
            admit(linked)
            use_link(tx, hashed)
            return self._issue(tx, linked.name, linked.token_lifetime, linked.endpoint)

    def activation_link(self, link: str) -> LinkedRecipient:
        """The recipient an unused link leads to, without using it."""
        with self.database.read() as tx:
            return unused_link(tx, self.hash_token(presented_link(link)))

    def set_ip_access_list(
        self, name: str, entries: Sequence[str], max_entries: int = DEFAULT_MAX_ENTRIES
    ) -> tuple[str, ...]:
        """Replace the recipient's IP access list (empty: anywhere); returns it as stored."""
        stored = checked_ip_access_list(entries, max_entries)
        with self._change() as tx:
            tx.execute(
                "UPDATE recipients SET ip_access_list = ? WHERE name_key = ?",
                (json.dumps(list(stored)), self._recipient_key(tx, name)),
            )
        return stored

    # -- grants --------------------------------------------------------------------------
    def grant(self, share: str, recipient: str) -> None:
        with self._change() as tx:
            share_key = self._share_key(tx, share)
            recipient_key = self._recipient_key(tx, recipient)
            tx.execute(  # granted already: unchanged, whichever writer came first
                "INSERT INTO grants (share_key, recipient_key, created_at) VALUES (?,?,?) "
                "ON CONFLICT (share_key, recipient_key) DO NOTHING",
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
        return nullcontext(outer) if outer is not None else changing(self.database)

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
