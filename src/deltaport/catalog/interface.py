"""What a provider can read and change of a catalog, as one protocol: the catalog database
(:class:`~deltaport.catalog.sql_store.SqlCatalog`) and a server's admin API
(:class:`~deltaport.catalog.remote.RemoteCatalog`) both implement it, so the provider's
operations are written once over either.

Names are case-insensitive. A change that cannot be made raises
:class:`~deltaport.catalog.rows.CatalogError`: :class:`~deltaport.catalog.rows.CatalogNotFoundError`
for a name that does not exist, :class:`~deltaport.catalog.rows.CatalogConflictError` for
one taken.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Protocol

from deltaport.catalog.recipient_access import (
    DEFAULT_LINK_LIFETIME,
    DEFAULT_MAX_ENTRIES,
    ActivationLink,
)
from deltaport.catalog.rows import (
    NEW,
    NO_DETAILS,
    CatalogContents,
    Details,
    IssuedToken,
    RecipientChange,
    RecipientSpec,
    RotationSpec,
    SchemaDetails,
    SchemaRow,
    ShareRow,
    TableRow,
    TableSpec,
)


class Catalog(Protocol):
    """Every read and change a provider makes of shares, schemas, tables, recipients (their
    properties, IP access lists, tokens, OAuth clients and activation links) and grants."""

    def contents(self) -> CatalogContents:
        """Everything, from one read."""
        ...

    # -- shares, schemas and tables --------------------------------------------------------
    def create_share(
        self, name: str, comment: str | None = None, details: Details = NO_DETAILS
    ) -> ShareRow: ...

    def set_share_comment(self, name: str, comment: str | None) -> None: ...

    def drop_share(self, name: str) -> None:
        """The share with its tables and grants."""
        ...

    def add_table(self, share: str, schema: str, name: str, spec: TableSpec) -> TableRow:
        """Share the table ``spec`` describes as ``share.schema.name``."""
        ...

    def update_table(self, share: str, schema: str, name: str, spec: TableSpec) -> None:
        """Change how a shared table is read (history, start version, partition filter,
        comment); its location, access modes and details stay."""
        ...

    def remove_table(self, share: str, schema: str, name: str) -> None: ...

    def set_schema_details(self, share: str, schema: str, given: SchemaDetails) -> SchemaRow:
        """Replace what is given of what recipients see of a schema holding tables."""
        ...

    # -- recipients and their credentials -------------------------------------------------
    def create_recipient(
        self, name: str, spec: RecipientSpec = NEW, *, max_ip_entries: int = DEFAULT_MAX_ENTRIES
    ) -> IssuedToken:
        """A recipient and its first credential (a bearer token or an OAuth client)."""
        ...

    def create_recipient_with_link(
        self,
        name: str,
        spec: RecipientSpec = NEW,
        *,
        link_lifetime: timedelta = DEFAULT_LINK_LIFETIME,
        max_ip_entries: int = DEFAULT_MAX_ENTRIES,
    ) -> ActivationLink:
        """A recipient without a credential yet, and the link whose first download issues
        it."""
        ...

    def update_recipient(
        self, name: str, change: RecipientChange, *, max_ip_entries: int = DEFAULT_MAX_ENTRIES
    ) -> None:
        """Replace what ``change`` gives, in one change."""
        ...

    def set_ip_access_list(
        self, name: str, entries: Sequence[str], max_entries: int = DEFAULT_MAX_ENTRIES
    ) -> tuple[str, ...]:
        """Replace the recipient's IP access list (empty: anywhere); returns it as stored."""
        ...

    def rotate(
        self, name: str, rotation: RotationSpec, *, default_endpoint: str | None = None
    ) -> IssuedToken:
        """A new credential; the current ones stay valid ``old_valid_for`` more."""
        ...

    def rotate_with_link(
        self,
        name: str,
        old_valid_for: timedelta,
        *,
        default_endpoint: str | None = None,
        link_lifetime: timedelta = DEFAULT_LINK_LIFETIME,
    ) -> ActivationLink:
        """A rotation whose new credential the link's first download issues."""
        ...

    def revoke(self, name: str) -> None:
        """End every credential of the recipient now."""
        ...

    def drop_recipient(self, name: str) -> None: ...

    # -- grants ---------------------------------------------------------------------------
    def grant(self, share: str, recipient: str) -> None: ...

    def revoke_grant(self, share: str, recipient: str) -> None: ...
