"""The catalog's rows as the store hands them out: shares, tables, recipients, tokens, the
whole contents of one read, a token just issued; and the errors of a change refused."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from enum import Enum

from deltaport.catalog.database.connection import (
    Database,
    DatabaseFullError,
    DatabaseUnavailableError,
    DuplicateKeyError,
    Row,
    Transaction,
)
from deltaport.catalog.limits import properties_problem
from deltaport.protocol.credentials import URL
from deltaport.protocol.errors import (
    InsufficientStorageError,
    InvalidParameterError,
    ResourceExistsError,
    ResourceNotFoundError,
    SharingError,
    TemporarilyUnavailableError,
)
from deltaport.protocol.names import name_key


class CatalogError(ValueError):
    """A catalog change that cannot be made (a name taken, missing, or invalid)."""


class CatalogNotFoundError(CatalogError):
    """The share, table or recipient named does not exist."""


class CatalogConflictError(CatalogError):
    """The name is taken already."""


def insert_new(tx: Transaction, sql: str, params: Sequence[object], taken: str) -> None:
    """Insert a row whose key says it is new (a share, table or recipient name): a key
    taken, even by a writer that committed a moment ago, is :class:`CatalogConflictError`
    with the message ``taken``. The database's key decides, so two writers cannot both
    create the same name."""
    try:
        tx.execute(sql, params)
    except DuplicateKeyError:
        raise CatalogConflictError(taken) from None


def catalog_refusal(exc: Exception) -> SharingError | None:
    """The sharing API's answer for ``exc`` if the catalog raised it, else None: one mapping
    for every route that reads or changes the catalog over HTTP (the admin API, the
    provider API, the activation links). A name that does not exist answers 404, one taken
    409, any other refused change 400 with the catalog's reason, and a database that
    cannot be reached 503, one whose disk is full 507."""
    if isinstance(exc, CatalogNotFoundError):
        return ResourceNotFoundError(str(exc))
    if isinstance(exc, CatalogConflictError):
        return ResourceExistsError(str(exc))
    if isinstance(exc, CatalogError):
        return InvalidParameterError(str(exc))
    if isinstance(exc, DatabaseUnavailableError):
        return TemporarilyUnavailableError(
            "the catalog database cannot be reached at the moment; retry later"
        )
    if isinstance(exc, DatabaseFullError):
        return InsufficientStorageError(
            "the catalog database's disk is full: nothing was changed; retry once the "
            "provider has freed space"
        )
    return None


class Keep(Enum):
    """``KEEP``: a rotation gives the new token the lifetime the recipient's tokens have."""

    KEEP = "keep"


KEEP = Keep.KEEP


MAX_DISPLAY_NAME_LENGTH = 255
"""The protocol's bound: a longer display name may be cut by clients."""


@dataclass(frozen=True)
class Details:
    """A display name and properties (pairs in the order given: the rows stay hashable)."""

    display_name: str | None = None
    properties: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, display_name: str | None, properties: Mapping[str, str] | None) -> Details:
        return cls(display_name, tuple((properties or {}).items()))

    @property
    def fields(self) -> tuple[str | None, tuple[tuple[str, str], ...]]:
        """The ``display_name`` and ``properties`` of a row."""
        return self.display_name, self.properties

    @property
    def columns(self) -> tuple[str | None, str]:
        """The ``display_name`` and ``properties`` (JSON) columns."""
        return self.display_name, json.dumps(dict(self.properties))

    @property
    def property_map(self) -> dict[str, str] | None:
        """The properties as a recipient's listing carries them (None: none)."""
        return dict(self.properties) or None

    def check(self) -> None:
        """Refuse what cannot be stored, naming the field."""
        name = self.display_name
        if name is not None and len(name) > MAX_DISPLAY_NAME_LENGTH:
            raise CatalogError(
                f"displayName is {len(name)} characters long; at most "
                f"{MAX_DISPLAY_NAME_LENGTH} are allowed"
            )
        problem = properties_problem(dict(self.properties))
        if problem is not None:
            raise CatalogError(f"properties: {problem}")


NO_DETAILS = Details()


@dataclass(frozen=True)
class RecipientSpec:
    """What a new recipient is: its properties, how long its tokens live (None: no expiry),
    where its profiles point, its comment, the addresses its requests may come from (empty:
    anywhere), how it authenticates and when it ends (ms since the epoch). Every front door
    builds one; the activation link (or not) is the operation chosen."""

    properties: Mapping[str, str] = field(default_factory=dict)
    token_lifetime: timedelta | None = None
    endpoint: str | None = None
    comment: str | None = None
    ip_access_list: Sequence[str] = ()
    authentication_type: str = "TOKEN"
    expires_at: int | None = None


@dataclass(frozen=True)
class RecipientChange:
    """What changes of a recipient: a field left KEEP stays (a comment of None clears it)."""

    properties: Mapping[str, str] | Keep = KEEP
    comment: str | Keep | None = KEEP
    ip_access_list: Sequence[str] | Keep = KEEP


@dataclass(frozen=True)
class RotationSpec:
    """A rotation of a recipient's token: how long its current tokens stay valid (zero: they
    end now), the new token's lifetime (KEEP: the recipient's; None: no expiry) and where
    its profile points (None: where the last one did)."""

    old_valid_for: timedelta
    expires_in: timedelta | Keep | None = KEEP
    endpoint: str | None = None


NEW = RecipientSpec()
"""A recipient with no properties, comment or IP access list, whose tokens do not expire."""


@dataclass(frozen=True)
class SchemaRow:
    """What recipients see of a schema besides its name. A schema exists through its
    tables; this is kept on its share's row (see :mod:`deltaport.catalog.schemas`)."""

    comment: str | None = None
    display_name: str | None = None
    properties: tuple[tuple[str, str], ...] = ()

    def as_json(self) -> dict[str, object]:
        return {
            "comment": self.comment,
            "displayName": self.display_name,
            "properties": dict(self.properties),
        }


NO_SCHEMA_DETAILS = SchemaRow()


@dataclass(frozen=True)
class SchemaDetails:
    """A change of what recipients see of a schema: a field left KEEP stays, None clears a
    display name or a comment, an empty mapping the properties."""

    display_name: str | Keep | None = KEEP
    comment: str | Keep | None = KEEP
    properties: Mapping[str, str] | Keep = KEEP


@dataclass(frozen=True)
class ShareRow:
    name: str
    id: str
    comment: str | None
    display_name: str | None = None
    properties: tuple[tuple[str, str], ...] = ()
    """Pairs in the order given (the row stays hashable)."""
    schemas: tuple[tuple[str, SchemaRow], ...] = ()
    """Schema name key -> what recipients see of it, for the schemas that have any."""

    def schema(self, name: str) -> SchemaRow:
        """What recipients see of the schema ``name`` besides its name."""
        return dict(self.schemas).get(name_key(name), NO_SCHEMA_DETAILS)


@dataclass(frozen=True)
class TableSpec:
    """How a table is shared: where it is, how recipients may read it and what they see of
    it besides its name. What a provider gives to share a table (every front door builds
    one), and what :meth:`TableRow.spec` gives back of a shared one."""

    location: str
    history_shared: bool = False
    start_version: int = 0
    partition_filter: str | None = None
    access_modes: tuple[str, ...] = (URL,)
    auxiliary_locations: tuple[str, ...] = ()
    comment: str | None = None
    details: Details = NO_DETAILS


@dataclass(frozen=True)
class TableRow:
    share: str
    schema: str
    name: str
    location: str
    id: str
    history_shared: bool
    start_version: int
    partition_filter: str | None
    access_modes: tuple[str, ...] = (URL,)
    auxiliary_locations: tuple[str, ...] = ()
    comment: str | None = None
    display_name: str | None = None
    properties: tuple[tuple[str, str], ...] = ()

    @classmethod
    def shared(cls, share: str, schema: str, name: str, id: str, spec: TableSpec) -> TableRow:
        """The row of the table ``share.schema.name`` shared as ``spec`` under ``id``."""
        return cls(
            share,
            schema,
            name,
            spec.location,
            id,
            spec.history_shared,
            spec.start_version,
            spec.partition_filter,
            tuple(spec.access_modes),
            tuple(spec.auxiliary_locations),
            spec.comment,
            *spec.details.fields,
        )

    @property
    def spec(self) -> TableSpec:
        """How it is shared, as :meth:`shared` took it."""
        return TableSpec(
            self.location,
            self.history_shared,
            self.start_version,
            self.partition_filter,
            self.access_modes,
            self.auxiliary_locations,
            self.comment,
            Details(self.display_name, self.properties),
        )

    def insert_values(self, key: str, share_key: str, ordinal: int) -> tuple[object, ...]:
        """Its ``shared_tables`` columns in the order the store inserts them."""
        return (
            key,
            share_key,
            self.schema,
            self.name,
            self.location,
            self.id,
            int(self.history_shared),
            self.start_version,
            self.partition_filter,
            json.dumps(self.access_modes),
            json.dumps(self.auxiliary_locations),
            ordinal,
            self.comment,
            self.display_name,
            json.dumps(dict(self.properties)),
        )


@dataclass(frozen=True)
class RecipientRow:
    name: str
    properties: dict[str, str]
    shares: tuple[str, ...]
    """Name keys of the shares granted to it."""
    endpoint: str | None = None
    """Where its last profile pointed (None: not recorded, a catalog of an older deltaport)."""
    token_lifetime: timedelta | None = None
    """How long its tokens live (None: they do not expire)."""
    comment: str | None = None
    ip_access_list: tuple[str, ...] = ()
    """The addresses and CIDR ranges its requests may come from (empty: anywhere)."""
    authentication_type: str = "TOKEN"
    """``TOKEN`` (bearer tokens) or ``OAUTH_CLIENT_CREDENTIALS`` (OAuth clients)."""
    expires_at: int | None = None
    """When the recipient ends (ms since the epoch): none of its credentials outlives it."""


@dataclass(frozen=True)
class TokenRow:
    recipient_key: str
    expires_at: int | None
    """Milliseconds since the epoch; None: never."""
    revoked_at: int | None


@dataclass(frozen=True)
class CatalogContents:
    """Everything a server needs, read in one go."""

    generation: int
    shares: tuple[ShareRow, ...]
    tables: tuple[TableRow, ...]
    recipients: dict[str, RecipientRow]
    tokens: dict[str, TokenRow]
    clients: dict[str, ClientRow] = field(default_factory=dict)
    """OAuth clients by client id."""


@dataclass(frozen=True)
class ClientRow:
    """An OAuth client: its secret's keyed hash, and its life as a token's."""

    secret_hash: str
    token: TokenRow


@dataclass(frozen=True)
class IssuedToken:
    recipient: str
    token: str
    expires_at: int | None
    endpoint: str | None = None
    """The sharing endpoint its profile points to, as recorded for the recipient."""
    client_id: str | None = None
    """For an OAuth recipient: the client whose secret ``token`` is."""


@dataclass(frozen=True)
class Counts:
    shares: int
    tables: int
    recipients: int


def counts(database: Database) -> Counts:
    """How many shares, shared tables and recipients the catalog holds (three counts, not
    a read of everything)."""
    found = database.query(
        "SELECT (SELECT COUNT(*) FROM shares), (SELECT COUNT(*) FROM shared_tables), "
        "(SELECT COUNT(*) FROM recipients)"
    )
    return Counts(*(int(n) for n in found[0]))


@dataclass(frozen=True)
class LastRows:
    """The rows of the last read, each with the object made of it."""

    tables: dict[Row, TableRow]
    recipients: dict[tuple[Row, tuple[str, ...]], RecipientRow]
    tokens: dict[Row, TokenRow]


def table_row(r: Row) -> TableRow:
    """A ``shared_tables`` row as :meth:`SqlCatalog.contents` selects it."""
    modes, auxiliary = tuple(json.loads(r[8])), tuple(json.loads(r[9]))
    properties = tuple(json.loads(r[12]).items())
    return TableRow(
        r[0],
        r[1],
        r[2],
        r[3],
        r[4],
        bool(r[5]),
        r[6],
        r[7],
        modes,
        auxiliary,
        r[10],
        r[11],
        properties,
    )


def capped(expires_at: int | None, end: int | None) -> int | None:
    """The earlier of two ends (ms since the epoch; None: never)."""
    ends = [e for e in (expires_at, end) if e is not None]
    return min(ends) if ends else None


def share_row(r: Row) -> ShareRow:
    """A ``shares`` row as :meth:`SqlCatalog.contents` selects it."""
    return ShareRow(r[0], r[1], r[2], r[3], tuple(json.loads(r[4]).items()), schema_rows(r[5]))


def schema_rows(column: str) -> tuple[tuple[str, SchemaRow], ...]:
    """The ``schema_details`` column of a share's row, by schema name key."""
    return tuple(
        sorted(
            (
                key,
                SchemaRow(d.get("comment"), d.get("displayName"), tuple(d["properties"].items())),
            )
            for key, d in json.loads(column).items()
        )
    )


def recipient_row(r: Row, shares: tuple[str, ...]) -> RecipientRow:
    """A ``recipients`` row as :meth:`SqlCatalog.contents` selects it."""
    lifetime = None if r[4] is None else timedelta(seconds=r[4])
    ips = tuple(json.loads(r[6]))
    return RecipientRow(r[1], json.loads(r[2]), shares, r[3], lifetime, r[5], ips, r[7], r[8])


def converted(
    before: LastRows,
    generation: int,
    shares: list[Row],
    tables: list[Row],
    recipients: list[Row],
    granted: dict[str, list[str]],
    tokens: list[Row],
    clients: list[Row],
) -> tuple[CatalogContents, LastRows]:
    """The rows of one read as :class:`CatalogContents`, reusing the objects made for rows
    that are unchanged since the last read (``before``): a reload after a small change
    (the admin API's, which reads the catalog whole) then makes few new objects; and the
    rows of this read for the next."""
    table_rows = {r: before.tables.get(r) or table_row(r) for r in tables}
    recipient_rows: dict[tuple[Row, tuple[str, ...]], RecipientRow] = {}
    for r in recipients:
        key = (r, tuple(granted.get(r[0], ())))
        recipient_rows[key] = before.recipients.get(key) or recipient_row(r, key[1])
    token_rows = {r: before.tokens.get(r) or TokenRow(r[1], r[2], r[3]) for r in tokens}
    contents = CatalogContents(
        generation,
        tuple(share_row(r) for r in shares),
        tuple(table_rows.values()),
        {key[0][0]: row for key, row in recipient_rows.items()},
        {r[0]: row for r, row in token_rows.items()},
        {r[0]: ClientRow(r[1], TokenRow(r[2], r[3], r[4])) for r in clients},
    )
    return contents, LastRows(table_rows, recipient_rows, token_rows)


def read_contents(tx: Transaction, before: LastRows) -> tuple[CatalogContents, LastRows]:
    """Everything, read in ``tx`` (see :func:`converted` for ``before``)."""
    generation = int(tx.execute("SELECT value FROM deltaport_meta WHERE key = 'generation'")[0][0])
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
    granted: dict[str, list[str]] = {}
    for recipient_key, share_key in tx.execute("SELECT recipient_key, share_key FROM grants"):
        granted.setdefault(recipient_key, []).append(share_key)
    tokens = tx.execute("SELECT hash, recipient_key, expires_at, revoked_at FROM tokens")
    clients = tx.execute(
        "SELECT client_id, secret_hash, recipient_key, expires_at, revoked_at FROM oauth_clients"
    )
    return converted(before, generation, shares, tables, recipients, granted, tokens, clients)
