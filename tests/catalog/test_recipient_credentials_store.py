"""The store's side of activation links and OAuth clients, on SQLite and PostgreSQL: a
link is used once, a refused use leaves it usable, OAuth clients are issued, ended by a
rotation and revoked like tokens, and no secret is stored."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from deltaport.catalog.live.live_catalog import LiveCatalog
from deltaport.catalog.rows import CatalogNotFoundError, RecipientSpec, RotationSpec
from deltaport.catalog.sql_store import SqlCatalog
from deltaport.catalog.tokens import OAUTH
from deltaport.protocol.errors import PermissionDeniedError, UnauthenticatedError
from postgres import postgres_server, postgres_url  # noqa: F401

ENDPOINT = "https://sharing.example.com/delta-sharing"


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> SqlCatalog:
    if request.param == "sqlite":
        return SqlCatalog(f"sqlite:///{tmp_path}/c.db")
    return SqlCatalog(str(request.getfixturevalue("postgres_url")))


def _dump(store: SqlCatalog) -> str:
    rows = []
    for table in ("tokens", "oauth_clients", "activation_links", "recipients"):
        rows += store.database.query(f"SELECT * FROM {table}")
    return repr(rows)


def test_a_link_is_used_once(store: SqlCatalog) -> None:
    link = store.create_recipient_with_link(
        "r", RecipientSpec(endpoint=ENDPOINT, ip_access_list=["10.0.0.0/8"])
    )
    assert (
        link.url
        == f"https://sharing.example.com{'/api/2.1/unity-catalog/public/data_sharing_activation'}/{link.token}"
    )

    def refuse(_: object) -> None:
        raise PermissionDeniedError("no")

    with pytest.raises(PermissionDeniedError):
        store.activate(link.token, refuse)
    assert store.activation_link(link.token).name == "r"
    issued = store.activate(link.token, lambda _: None)
    assert issued.token.startswith("dpt_") and issued.endpoint == ENDPOINT
    for use in (
        lambda: store.activate(link.token, lambda _: None),
        lambda: store.activation_link(link.token),
    ):
        with pytest.raises(CatalogNotFoundError):
            use()
    assert link.token not in _dump(store) and issued.token not in _dump(store)


def test_oauth_clients_live_like_tokens(store: SqlCatalog) -> None:
    first = store.create_recipient("o", RecipientSpec(endpoint=ENDPOINT, authentication_type=OAUTH))
    assert first.client_id is not None
    live = LiveCatalog(store, lambda _: {})
    recipient, access, lifetime = live.client_credentials(first.client_id, first.token, 3600)
    assert (recipient.name, lifetime) == ("o", 3600)
    assert live.authenticate(f"Bearer {access}").name == "o"
    with pytest.raises(UnauthenticatedError):
        live.client_credentials(first.client_id, "dps_wrong", 3600)
    second = store.rotate("o", RotationSpec(timedelta(0)))
    assert second.client_id not in (None, first.client_id)
    live.refresh()
    with pytest.raises(UnauthenticatedError):
        live.authenticate(f"Bearer {access}")
    with pytest.raises(UnauthenticatedError):
        live.client_credentials(first.client_id, first.token, 3600)
    assert second.client_id is not None
    live.client_credentials(second.client_id, second.token, 3600)
    store.revoke("o")
    live.refresh()
    with pytest.raises(UnauthenticatedError):
        live.client_credentials(second.client_id, second.token, 3600)
    assert first.token not in _dump(store) and second.token not in _dump(store)
    live.close()


def test_a_client_with_a_lifetime_cuts_its_access_tokens(store: SqlCatalog) -> None:
    issued = store.create_recipient(
        "short", RecipientSpec(token_lifetime=timedelta(seconds=600), authentication_type=OAUTH)
    )
    assert issued.client_id is not None and issued.expires_at is not None
    issued_at = issued.expires_at / 1000 - 600
    live = LiveCatalog(store, lambda _: {}, wall_clock=lambda: issued_at + 100)
    _, _, lifetime = live.client_credentials(issued.client_id, issued.token, 3600)
    assert lifetime == 500
    _, _, lifetime = live.client_credentials(issued.client_id, issued.token, 60)
    assert lifetime == 60
    live.close()
