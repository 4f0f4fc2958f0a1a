"""One generation of the catalog as requests read it, built whole from every row
(:func:`loaded`) or from the one before and the items changed since (:func:`applied`).

A snapshot is never changed once built: :func:`applied` copies the indexes it changes
(a copy of a dict of 50,000 entries takes about a millisecond) and builds anew only the
shares and recipients whose rows changed, reusing every table and recipient whose row did
not. Both ways give equal snapshots for equal rows (the suite checks it on random changes).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from deltaport.catalog.access import table_access
from deltaport.catalog.live.reading import Changes, Rows, ShareOrder
from deltaport.catalog.model import CatalogView, Recipient, Share, SharedSchema, SharedTable
from deltaport.catalog.recipient_access import IpAccessList
from deltaport.catalog.rows import ClientRow, RecipientRow, ShareRow, TableRow, TokenRow
from deltaport.catalog.tokens import client_credential, credential_id
from deltaport.protocol.names import name_key
from deltaport.storage import parse_location

OptionsFor = Callable[[str], dict[str, str]]
"""Storage options for a table location (from the server's ``storage`` prefixes)."""
V = TypeVar("V")
TablesOfShare = dict[str, tuple[int, TableRow]]
"""A share's tables: table key -> its ordinal and row."""


@dataclass(frozen=True)
class Held:
    """The rows a snapshot was built from, by key, as :func:`applied` changes them."""

    shares: dict[str, tuple[ShareOrder, ShareRow]]
    tables: dict[str, TablesOfShare]
    """Share key -> its tables."""
    recipients: dict[str, RecipientRow]
    tokens: dict[str, dict[str, TokenRow]]
    clients: dict[str, dict[str, ClientRow]]


@dataclass(frozen=True)
class Snapshot:
    generation: int
    view: CatalogView
    recipients: dict[str, Recipient]
    credentials: dict[str, tuple[str, TokenRow]]
    """Token hash -> the token's credential id and row; and credential id -> the same (an
    OAuth client's credential id too)."""
    clients: dict[str, tuple[str, ClientRow]]
    """OAuth client id -> its credential id and row."""
    held: Held


def loaded(rows: Rows, options_for: OptionsFor) -> Snapshot:
    """The snapshot of every row of the catalog."""
    tables: dict[str, TablesOfShare] = {}
    for key, (share_key, ordinal, row) in rows.tables.items():
        tables.setdefault(share_key, {})[key] = (ordinal, row)
    held = Held(rows.shares, tables, rows.recipients, rows.tokens, rows.clients)
    view = CatalogView(
        [
            _share(held.shares[key][1], tables.get(key, {}), options_for, _no_reuse)
            for key in _ordered(held.shares)
        ]
    )
    credentials: dict[str, tuple[str, TokenRow]] = {}
    clients: dict[str, tuple[str, ClientRow]] = {}
    for key in held.recipients:
        _add_credentials(credentials, clients, held.tokens.get(key, {}), held.clients.get(key, {}))
    recipients = {key: _recipient(r) for key, r in held.recipients.items()}
    return Snapshot(rows.generation, view, recipients, credentials, clients, held)


def applied(before: Snapshot, changes: Changes, options_for: OptionsFor) -> Snapshot:
    """``before`` with the changed items' rows put in."""
    held, view = before.held, before.view
    shares, tables = held.shares, held.tables
    if changes.shares or changes.tables:
        shares, tables, view = _shares_applied(before, changes, options_for)
    recipients, credentials, clients = before.recipients, before.credentials, before.clients
    recipient_rows, token_rows, client_rows = held.recipients, held.tokens, held.clients
    rows = changes.rows
    if changes.recipients:
        recipients, recipient_rows = dict(recipients), dict(recipient_rows)
        for key in changes.recipients:
            row = rows.recipients.get(key)
            _put(recipient_rows, key, row)
            if row is None:
                recipients.pop(key, None)
            elif held.recipients.get(key) != row or key not in recipients:
                recipients[key] = _recipient(row)
    moved = [
        key
        for key in changes.recipients
        if held.tokens.get(key, {}) != rows.tokens.get(key, {})
        or held.clients.get(key, {}) != rows.clients.get(key, {})
    ]
    if moved:  # the credentials' indexes are copied only when credentials changed
        credentials, clients = dict(credentials), dict(clients)
        token_rows, client_rows = dict(token_rows), dict(client_rows)
        for key in moved:
            for hashed in held.tokens.get(key, {}):
                credentials.pop(hashed, None)
                credentials.pop(credential_id(hashed), None)
            for client_id in held.clients.get(key, {}):
                clients.pop(client_id, None)
                credentials.pop(client_credential(client_id), None)
            new_tokens, new_clients = rows.tokens.get(key, {}), rows.clients.get(key, {})
            _put(token_rows, key, new_tokens or None)
            _put(client_rows, key, new_clients or None)
            _add_credentials(credentials, clients, new_tokens, new_clients)
    held = Held(shares, tables, recipient_rows, token_rows, client_rows)
    return Snapshot(changes.rows.generation, view, recipients, credentials, clients, held)


def _shares_applied(
    before: Snapshot, changes: Changes, options_for: OptionsFor
) -> tuple[dict[str, tuple[ShareOrder, ShareRow]], dict[str, TablesOfShare], CatalogView]:
    """The share rows, table rows and view with the changed shares and tables put in:
    each share that changed, or one of whose tables did, is built again."""
    held, rows = before.held, changes.rows
    shares, tables = dict(held.shares), dict(held.tables)
    touched = set(changes.shares)
    for key in changes.shares:
        _put(shares, key, rows.shares.get(key))
    copied: set[str] = set()

    def tables_of(share_key: str) -> TablesOfShare:
        if share_key not in copied:
            tables[share_key] = dict(held.tables.get(share_key, {}))
            copied.add(share_key)
            touched.add(share_key)
        return tables[share_key]

    for key in changes.tables:
        old = before.view.table_by_key(key)
        if old is not None:
            tables_of(name_key(old.share)).pop(key, None)
        if key in rows.tables:
            share_key, ordinal, row = rows.tables[key]
            tables_of(share_key)[key] = (ordinal, row)

    def reuse(key: str, row: TableRow, share: Share) -> SharedTable | None:
        old = before.view.table_by_key(key)
        kept = held.tables.get(name_key(share.name), {}).get(key)
        if old is None or kept is None or kept[1] != row or old.share_id != share.id:
            return None
        return old

    built: dict[str, Share | None] = {}
    for key in touched:
        built[key] = (
            _share(shares[key][1], tables.get(key, {}), options_for, reuse)
            if key in shares
            else None
        )
        if not (key in shares and tables.get(key)):
            tables.pop(key, None)  # held as a full load holds them: no empty entries
    # added, removed, or dropped and created again (a later creation time: the newest)
    moved = any(_place(held.shares, key) != _place(shares, key) for key in changes.shares)
    order = _ordered(shares) if moved else None
    return shares, tables, before.view.replaced(built, order)


def _place(shares: Mapping[str, tuple[ShareOrder, ShareRow]], key: str) -> ShareOrder | None:
    """Where the share ``key`` stands in the catalog's order; None when it is not there."""
    found = shares.get(key)
    return None if found is None else found[0]


def _put(index: dict[str, V], key: str, value: V | None) -> None:
    if value is None:
        index.pop(key, None)
    else:
        index[key] = value


def _ordered(shares: Mapping[str, tuple[ShareOrder, ShareRow]]) -> list[str]:
    return sorted(shares, key=lambda key: shares[key][0])


Reuse = Callable[[str, TableRow, Share], SharedTable | None]


def _no_reuse(key: str, row: TableRow, share: Share) -> SharedTable | None:
    return None


def _share(row: ShareRow, tables: TablesOfShare, options_for: OptionsFor, reuse: Reuse) -> Share:
    """The share with its schemas and tables, in the order of the tables' ordinals."""
    share = Share(
        row.name,
        id=row.id,
        display_name=row.display_name,
        comment=row.comment,
        properties=dict(row.properties) or None,
    )
    for key, (_, t) in sorted(tables.items(), key=lambda item: item[1][0]):
        schema = share.schemas.get(name_key(t.schema)) or share.schemas.setdefault(
            name_key(t.schema), _schema(share.name, t.schema, row)
        )
        schema.tables[name_key(t.name)] = reuse(key, t, share) or _table(t, share, options_for)
    return share


def _schema(share: str, name: str, row: ShareRow) -> SharedSchema:
    details = row.schema(name)
    return SharedSchema(
        share,
        name,
        display_name=details.display_name,
        comment=details.comment,
        properties=dict(details.properties) or None,
    )


def _add_credentials(
    credentials: dict[str, tuple[str, TokenRow]],
    clients: dict[str, tuple[str, ClientRow]],
    tokens: Mapping[str, TokenRow],
    oauth_clients: Mapping[str, ClientRow],
) -> None:
    for hashed, token in tokens.items():
        credential = credential_id(hashed)
        credentials[hashed] = credentials[credential] = (credential, token)
    for client_id, client in oauth_clients.items():
        credential = client_credential(client_id)
        clients[client_id] = (credential, client)
        credentials[credential] = (credential, client.token)


def _recipient(r: RecipientRow) -> Recipient:
    return Recipient(
        r.name, frozenset(r.shares), dict(r.properties), ip_access=IpAccessList.of(r.ip_access_list)
    )


def _table(t: TableRow, share: Share, options_for: OptionsFor) -> SharedTable:
    location = parse_location(t.location)
    return SharedTable(
        share=share.name,
        schema=t.schema,
        name=t.name,
        location=location,
        storage_options=options_for(t.location),
        id=t.id,
        share_id=share.id,
        history_shared=t.history_shared,
        start_version=t.start_version,
        display_name=t.display_name,
        comment=t.comment,
        properties=dict(t.properties) or None,
        access=table_access(location, t.location, t.access_modes, t.auxiliary_locations),
        partition_filter=t.partition_filter,
    )
