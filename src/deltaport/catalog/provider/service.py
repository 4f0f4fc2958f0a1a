"""The provider's operations over a :class:`~deltaport.catalog.interface.Catalog`, with
their rules and the serving side's settings applied: one place, so that a change made
through the admin API, the Unity Catalog-shaped API, the console or a command is the same
change. Raises the catalog's own errors (:class:`CatalogError` and its kinds); each front
door turns them into its answer (an HTTP error, a form's message, a command's line)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from datetime import timedelta

from deltaport.catalog.interface import Catalog
from deltaport.catalog.provider.profiles import profile_document
from deltaport.catalog.provider.settings import ProviderSettings
from deltaport.catalog.provider.tables import check_table, split_table_name
from deltaport.catalog.recipient_access import ActivationLink
from deltaport.catalog.rows import (
    KEEP,
    NEW,
    NO_DETAILS,
    CatalogContents,
    CatalogError,
    CatalogNotFoundError,
    Details,
    IssuedToken,
    Keep,
    RecipientChange,
    RecipientSpec,
    RotationSpec,
    SchemaDetails,
    SchemaRow,
    ShareRow,
    TableRow,
    TableSpec,
)
from deltaport.protocol.names import name_key

Batch = Callable[[], AbstractContextManager[object]]


@dataclass(frozen=True)
class TableChange:
    """One table of a share changed with others: ``add`` shares it as ``spec``, ``remove``
    stops sharing it, ``update`` changes how it is read (see :meth:`Catalog.update_table`)."""

    action: str
    schema: str
    name: str
    spec: TableSpec


ADD, REMOVE, UPDATE = "add", "remove", "update"


class ChangeRefused(CatalogError):
    """One of several changes refused before any was made; ``position`` says which."""

    def __init__(self, position: int, reason: CatalogError) -> None:
        super().__init__(str(reason))
        self.position = position


class ProviderService:
    def __init__(
        self, catalog: Catalog, settings: ProviderSettings, batch: Batch = nullcontext
    ) -> None:
        """``batch`` makes the changes inside it one transaction (the catalog database's
        :meth:`~deltaport.catalog.sql_store.SqlCatalog.batch`; through ``--server`` each
        change is its own)."""
        self._catalog = catalog
        self._settings = settings
        self._batch = batch

    @property
    def sharing_url(self) -> str | None:
        return self._settings.sharing_url

    def contents(self) -> CatalogContents:
        return self._catalog.contents()

    # -- shares and schemas ----------------------------------------------------------------
    def create_share(
        self, name: str, comment: str | None = None, details: Details = NO_DETAILS
    ) -> ShareRow:
        return self._catalog.create_share(name, comment, details)

    def set_share_comment(self, name: str, comment: str | None) -> None:
        self._catalog.set_share_comment(name, comment)

    def drop_share(self, name: str) -> None:
        self._catalog.drop_share(name)

    def set_schema_details(self, share: str, schema: str, given: SchemaDetails) -> SchemaRow:
        return self._catalog.set_schema_details(share, schema, given)

    def drop_schema(self, share: str, schema: str) -> int:
        """Remove every table of ``share.schema`` in one transaction (a schema exists while
        it holds tables); returns how many there were."""
        tables = [
            t
            for t in self._catalog.contents().tables
            if name_key(t.share) == name_key(share) and name_key(t.schema) == name_key(schema)
        ]
        if not tables:
            raise CatalogNotFoundError(f"no schema {share}.{schema} (it holds no tables)")
        with self._batch():
            for t in tables:
                self._catalog.remove_table(t.share, t.schema, t.name)
        return len(tables)

    def change_share(
        self,
        share: str,
        comment: str | Keep | None,
        tables: Sequence[TableChange],
        schema_comments: Sequence[tuple[str, str | None]] = (),
    ) -> None:
        """Several changes of one share in one transaction: its comment (unless KEEP), its
        tables (each added or changed one checked first, :class:`ChangeRefused` naming the
        first that cannot be) and then its schemas' comments (None: kept)."""
        for position, change in enumerate(tables):
            if change.action != REMOVE:
                try:
                    self.check_table(f"{share}.{change.schema}.{change.name}", change.spec)
                except CatalogError as exc:
                    raise ChangeRefused(position, exc) from None
        with self._batch():
            if not isinstance(comment, Keep):
                self._catalog.set_share_comment(share, comment)
            for change in tables:
                if change.action == ADD:
                    self._catalog.add_table(share, change.schema, change.name, change.spec)
                elif change.action == REMOVE:
                    self._catalog.remove_table(share, change.schema, change.name)
                else:
                    self._catalog.update_table(share, change.schema, change.name, change.spec)
            for schema, schema_comment in schema_comments:  # after the tables: a new schema
                comment_given = KEEP if schema_comment is None else schema_comment
                self._catalog.set_schema_details(
                    share, schema, SchemaDetails(comment=comment_given)
                )

    # -- tables ----------------------------------------------------------------------------
    def check_table(self, full_name: str, spec: TableSpec) -> None:
        """Refuse a table that cannot be shared (see :func:`~deltaport.catalog.provider.
        tables.check_table`), read with the location's storage options."""
        if not self._settings.reads_tables:
            return
        settings_for = self._settings.location_settings
        options = settings_for(spec.location)[0] if settings_for is not None else {}
        check_table(full_name, spec, options, settings_for)

    def add_table(self, full_name: str, spec: TableSpec) -> TableRow:
        """Share the table ``spec`` describes as ``full_name`` after checking it."""
        share, schema, name = split_table_name(full_name)
        return self.add_table_to(share, schema, name, spec)

    def add_table_to(self, share: str, schema: str, name: str, spec: TableSpec) -> TableRow:
        """:meth:`add_table` with the name in its parts."""
        self.check_table(f"{share}.{schema}.{name}", spec)
        return self._catalog.add_table(share, schema, name, spec)

    def update_table(
        self,
        full_name: str,
        *,
        history_shared: bool,
        start_version: int,
        partition_filter: str | None,
    ) -> None:
        """Change how a shared table is read (its location and access modes stay), after
        checking it as :meth:`add_table` checks a new one."""
        share, schema, name = split_table_name(full_name)
        current = next(
            (
                t
                for t in self._catalog.contents().tables
                if name_key(f"{t.share}.{t.schema}.{t.name}") == name_key(full_name)
            ),
            None,
        )
        if current is None:
            raise CatalogNotFoundError(f"no table {full_name}")
        spec = replace(
            current.spec,
            history_shared=history_shared,
            start_version=start_version,
            partition_filter=partition_filter,
        )
        self.check_table(full_name, spec)
        self._catalog.update_table(share, schema, name, spec)

    def remove_table(self, share: str, schema: str, name: str) -> None:
        self._catalog.remove_table(share, schema, name)

    # -- recipients ------------------------------------------------------------------------
    def create_recipient(self, name: str, spec: RecipientSpec = NEW) -> IssuedToken:
        """A recipient and its first credential; its profiles point to the spec's endpoint
        or, without one, where the settings say."""
        return self._catalog.create_recipient(
            name, self._pointed(spec), max_ip_entries=self._settings.max_ip_entries
        )

    def create_recipient_with_link(self, name: str, spec: RecipientSpec = NEW) -> ActivationLink:
        """A recipient and the activation link whose first download issues its credential
        (the link lasting as long as the settings say)."""
        return self._catalog.create_recipient_with_link(
            name,
            self._pointed(spec),
            link_lifetime=self._settings.link_lifetime,
            max_ip_entries=self._settings.max_ip_entries,
        )

    def _pointed(self, spec: RecipientSpec) -> RecipientSpec:
        return replace(spec, endpoint=spec.endpoint or self._settings.sharing_url)

    def update_recipient(self, name: str, change: RecipientChange) -> None:
        """Replace what ``change`` gives (KEEP: kept) in one change."""
        self._catalog.update_recipient(name, change, max_ip_entries=self._settings.max_ip_entries)

    def set_ip_access_list(self, name: str, entries: Sequence[str]) -> tuple[str, ...]:
        return self._catalog.set_ip_access_list(name, entries, self._settings.max_ip_entries)

    def rotate(self, name: str, rotation: RotationSpec) -> IssuedToken:
        return self._catalog.rotate(name, rotation, default_endpoint=self._settings.sharing_url)

    def rotate_with_link(self, name: str, grace: timedelta) -> ActivationLink:
        return self._catalog.rotate_with_link(
            name,
            grace,
            default_endpoint=self._settings.sharing_url,
            link_lifetime=self._settings.link_lifetime,
        )

    def revoke(self, name: str) -> None:
        self._catalog.revoke(name)

    def drop_recipient(self, name: str) -> None:
        self._catalog.drop_recipient(name)

    def profile(self, issued: IssuedToken) -> dict[str, object]:
        """The profile of a credential just issued (the only time its secret is known)."""
        endpoint = issued.endpoint or self._settings.sharing_url or ""
        return profile_document(issued, endpoint, self._settings.iceberg_for(endpoint))

    # -- grants ----------------------------------------------------------------------------
    def grant(self, share: str, recipient: str) -> None:
        self._catalog.grant(share, recipient)

    def revoke_grant(self, share: str, recipient: str) -> None:
        self._catalog.revoke_grant(share, recipient)

    def change_grants(self, share: str, granted: Iterable[tuple[str, bool]]) -> None:
        """Grant (True) or revoke (False) ``share`` to each recipient, in one transaction."""
        with self._batch():
            for recipient, grant in granted:
                if grant:
                    self._catalog.grant(share, recipient)
                else:
                    self._catalog.revoke_grant(share, recipient)
