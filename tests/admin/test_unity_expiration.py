"""Unity Catalog's ``expiration_time`` is an absolute end (milliseconds since the epoch, as
the Databricks SDK and Terraform send it), not a lifetime: the recipient reports the time
asked, and no credential issued to it (by activation, after a rotation) lives past it.
Expiry itself is judged with an injected clock."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from admin_support import CatalogAdminServer
from deltaport.catalog.live.live_catalog import LiveCatalog
from deltaport.protocol.errors import UnauthenticatedError

UC = "/api/2.1/unity-catalog"


@pytest.fixture
def api(catalog_admin_server: CatalogAdminServer) -> Iterator[httpx.Client]:
    with catalog_admin_server.running.api() as client:
        yield client


def _activate(catalog_admin_server: CatalogAdminServer, url: str) -> str:
    link = url.rsplit("/", 1)[1]
    admin = catalog_admin_server.running.admin
    answer = httpx.get(f"{admin}{UC}/public/data_sharing_activation/{link}")
    assert answer.status_code == 200, answer.text
    token: str = answer.json()["bearerToken"]
    return token


def _lives_at(catalog_admin_server: CatalogAdminServer, token: str, at_ms: int) -> bool:
    live = LiveCatalog(
        catalog_admin_server.catalog, lambda _: {}, poll_seconds=0, wall_clock=lambda: at_ms / 1000
    )
    try:
        live.authenticate(f"Bearer {token}")
        return True
    except UnauthenticatedError:
        return False
    finally:
        live.close()


def test_expiration_time_is_when_every_credential_ends(
    catalog_admin_server: CatalogAdminServer, api: httpx.Client
) -> None:
    asked = int(time.time() * 1000) + 600_000 + 437
    made = api.post(
        f"{UC}/recipients",
        json={"name": "ends_then", "authentication_type": "TOKEN", "expiration_time": asked},
    )
    assert made.status_code == 200, made.text
    assert made.json()["expiration_time"] == asked
    first = _activate(catalog_admin_server, made.json()["activation_url"])
    shown = api.get(f"{UC}/recipients/ends_then").json()
    assert shown["expiration_time"] == asked
    assert [t["expiration_time"] for t in shown["tokens"]] == [asked]
    assert _lives_at(catalog_admin_server, first, asked - 1)
    assert not _lives_at(catalog_admin_server, first, asked + 1)

    rotated = api.post(
        f"{UC}/recipients/ends_then/rotate-token", json={"existing_token_expire_in_seconds": 0}
    )
    assert rotated.status_code == 200, rotated.text
    second = _activate(catalog_admin_server, rotated.json()["activation_url"])
    shown = api.get(f"{UC}/recipients/ends_then").json()
    assert shown["expiration_time"] == asked
    assert max(t["expiration_time"] for t in shown["tokens"]) == asked
    assert _lives_at(catalog_admin_server, second, asked - 1)
    assert not _lives_at(catalog_admin_server, second, asked + 1)
    api.delete(f"{UC}/recipients/ends_then")


def test_an_activation_link_ends_with_its_recipient(
    catalog_admin_server: CatalogAdminServer, api: httpx.Client
) -> None:
    asked = int(time.time() * 1000) + 120_000
    made = api.post(
        f"{UC}/recipients",
        json={"name": "link_ends", "authentication_type": "TOKEN", "expiration_time": asked},
    )
    assert made.status_code == 200, made.text
    (expires_at,) = [
        row[0]
        for row in catalog_admin_server.catalog.database.query(
            "SELECT a.expires_at FROM activation_links a JOIN recipients r "
            "ON r.name_key = a.recipient_key WHERE r.name = 'link_ends'"
        )
    ]
    assert expires_at == asked
    api.delete(f"{UC}/recipients/link_ends")
