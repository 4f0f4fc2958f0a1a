"""The console's pages of the catalog (``catalog/listings/summaries``) say what the whole
catalog says (:meth:`SqlCatalog.contents`, counted in Python), on SQLite and PostgreSQL:
the counts of each share and recipient, the live credentials at a given time, a share's
tables and recipients, a recipient's grants, credentials and grantable shares."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from deltaport.catalog.listings import by_name, summaries
from deltaport.catalog.rows import CatalogContents, RecipientSpec, RotationSpec, TableSpec, TokenRow
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.catalog.tokens import OAUTH
from deltaport.protocol.names import name_key
from postgres import postgres_server, postgres_url  # noqa: F401


@pytest.fixture(params=["sqlite", "postgresql"])
def catalog(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SqlCatalog]:
    if request.param == "sqlite":
        opened = SqlCatalog(f"sqlite:///{tmp_path}/catalog.db")
    else:
        opened = SqlCatalog(str(request.getfixturevalue("postgres_url")))
    yield opened
    opened.database.close()


def filled(catalog: SqlCatalog) -> CatalogContents:
    """Shares with zero to three tables in two schemas, recipients granted zero to three
    shares, tokens revoked, rotated with a grace period and expired, an OAuth client."""
    with catalog.batch():
        for i in range(12):
            catalog.create_share(f"Share{i:02}", comment=f"number {i}")
            for t in range(i % 4):
                catalog.add_table(
                    f"Share{i:02}", f"sch{t % 2}", f"t{t}", TableSpec(f"/nowhere/{i}/{t}")
                )
        for i in range(15):
            catalog.create_recipient(
                f"Rec{i:02}",
                RecipientSpec(properties={"n": str(i)}, token_lifetime=timedelta(days=1)),
            )
            for s in range(i % 4):
                catalog.grant(f"Share{(i + s) % 12:02}", f"Rec{i:02}")
    catalog.revoke("Rec03")
    catalog.rotate("Rec04", RotationSpec(timedelta(hours=1)))
    catalog.rotate("Rec05", RotationSpec(timedelta(0), expires_in=None))
    catalog.create_recipient("Oauth", RecipientSpec(authentication_type=OAUTH))
    catalog.grant("Share01", "Oauth")
    return catalog.contents()


def test_the_pages_count_what_the_whole_catalog_holds(catalog: SqlCatalog) -> None:
    contents = filled(catalog)
    now = int(time.time() * 1000) + 10_000  # past a token ended with no grace period

    shares = summaries.share_page(catalog.database, 0, 100)
    assert shares.total == len(contents.shares)
    assert [s.share for s in shares.rows] == list(contents.shares)
    for summary in shares.rows:
        key = name_key(summary.share.name)
        assert summary.tables == sum(name_key(t.share) == key for t in contents.tables)
        assert summary.recipients == sum(key in r.shares for r in contents.recipients.values())
    later = summaries.share_page(catalog.database, 5, 4)
    assert [s.share for s in later.rows] == list(contents.shares[5:9])

    recipients = summaries.recipient_page(catalog.database, 0, 100, now)
    ordered = sorted(contents.recipients.items())
    assert recipients.total == len(ordered)
    assert [r.recipient.name for r in recipients.rows] == [r.name for _, r in ordered]
    credentials = [*contents.tokens.values(), *(c.token for c in contents.clients.values())]
    for summary, (key, row) in zip(recipients.rows, ordered, strict=True):
        assert sorted(summary.recipient.shares) == sorted(row.shares)
        assert summary.recipient.properties == row.properties
        live = [
            t
            for t in credentials
            if t.recipient_key == key
            and t.revoked_at is None
            and (t.expires_at is None or t.expires_at > now)
        ]
        assert summary.live_credentials == len(live), key
    assert {
        r.recipient.name: r.live_credentials
        for r in recipients.rows
        if r.recipient.name in {"Rec03", "Rec04", "Rec05", "Oauth"}
    } == {"Rec03": 0, "Rec04": 2, "Rec05": 1, "Oauth": 1}
    middle = summaries.recipient_page(catalog.database, 7, 5, now)
    assert [r.recipient.name for r in middle.rows] == [r.name for _, r in ordered[7:12]]


def test_one_share_one_recipient_and_one_table_as_the_whole_catalog_has_them(
    catalog: SqlCatalog,
) -> None:
    contents = filled(catalog)
    for share in contents.shares:
        found = summaries.share_view(catalog.database, share.name.upper())
        assert found is not None and found.share == share
        key = name_key(share.name)
        assert found.tables == [t for t in contents.tables if name_key(t.share) == key]
        granted = sorted(
            (r for r in contents.recipients.values() if key in r.shares), key=lambda r: r.name
        )
        assert [(r.name, r.properties, sorted(r.shares)) for r in found.recipients] == [
            (r.name, r.properties, sorted(r.shares)) for r in granted
        ]
    assert summaries.share_view(catalog.database, "nothing") is None

    names = {name_key(s.name): s.name for s in contents.shares}
    for key, recipient in contents.recipients.items():
        seen = summaries.recipient_view(catalog.database, recipient.name.lower())
        assert seen is not None and seen.recipient.name == recipient.name
        assert sorted(seen.granted) == sorted(names[k] for k in recipient.shares)
        mine = [t for t in contents.tokens.values() if t.recipient_key == key]
        mine += [c.token for c in contents.clients.values() if c.token.recipient_key == key]
        assert sorted(map(repr, (t for _, t in seen.credentials))) == sorted(map(repr, mine))
        assert summaries.grantable(catalog.database, recipient.name, 100) == [
            s.name for s in contents.shares if name_key(s.name) not in recipient.shares
        ]
    assert summaries.recipient_view(catalog.database, "nobody") is None
    assert len(summaries.grantable(catalog.database, "Rec00", 3)) == 3

    for table in contents.tables:
        assert (
            summaries.shared_table(catalog.database, table.share, table.schema, table.name) == table
        )
    assert summaries.shared_table(catalog.database, "Share03", "sch0", "none") is None
    assert summaries.all_tables(catalog.database) == (contents.generation, list(contents.tables))


def test_pages_by_name_say_what_the_whole_catalog_holds(catalog: SqlCatalog) -> None:
    """The provider API's keyset pages: every share and recipient once, in the order Python
    sorts their name keys on both databases (whatever PostgreSQL's locale would say about
    ``_``, ``-`` and accents), each recipient with its live credentials and unused link."""
    filled(catalog)
    with catalog.batch():
        for name in ("a_b", "aB-c", "Ab-d", "é1", "z"):
            catalog.create_share(name)
            catalog.create_recipient(name)
    catalog.create_recipient_with_link("linked", RecipientSpec(endpoint="https://example.com/ds"))
    contents = catalog.contents()
    now = int(time.time() * 1000) + 10_000
    unused = catalog.unused_links()

    shares: list[str] = []
    while page := by_name.shares_after(
        catalog.database, name_key(shares[-1]) if shares else None, 4
    ):
        shares += [s.name for s in page]
    assert shares == sorted((s.name for s in contents.shares), key=name_key)

    seen: list[by_name.RecipientCredentials] = []
    while page := by_name.recipients_after(
        catalog.database, name_key(seen[-1].recipient.name) if seen else None, 4, now
    ):
        seen += page
    assert [f.recipient.name for f in seen] == sorted(
        (r.name for r in contents.recipients.values()), key=name_key
    )
    for found in seen:
        key = name_key(found.recipient.name)
        expected = contents.recipients[key]  # its grants in an order of no meaning
        assert found.recipient == replace(expected, shares=tuple(sorted(expected.shares)))
        live = {h for h, t in contents.tokens.items() if t.recipient_key == key and _live(t, now)}
        assert {h for h, _ in found.tokens} == live
        clients = [c.token for c in contents.clients.values() if c.token.recipient_key == key]
        assert sorted(map(str, found.clients)) == sorted(str(c) for c in clients if _live(c, now))
        assert found.unused_link == (key in unused)
        assert by_name.recipient_credentials(catalog.database, found.recipient.name, now) == found
    assert any(f.unused_link for f in seen) and any(not f.tokens for f in seen)
    assert by_name.recipient_credentials(catalog.database, "nobody", now) is None


def _live(token: TokenRow, now: int) -> bool:
    return token.revoked_at is None and (token.expires_at is None or token.expires_at > now)
