"""The activation routes on the admin listener (the host the Databricks SDK calls) over raw
HTTP: no admin token needed, one use across both listeners, the IP access list enforced
(by the peer's address: ``X-Forwarded-For`` is not believed without trusted proxies),
errors as ``{"error_code", "message"}``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from admin_support import ADMIN_TOKEN, AdminServer, CatalogAdminServer, _await_admin
from deltaport.catalog.sql_store import SqlCatalog
from sharing_server import free_port, start_server, stop_server

UC = "/api/2.1/unity-catalog"
PUBLIC = f"{UC}/public/data_sharing_activation"
INFO = f"{UC}/public/data_sharing_activation_info"


@pytest.fixture
def api(catalog_admin_server: CatalogAdminServer) -> Iterator[httpx.Client]:
    with catalog_admin_server.running.api() as client:
        yield client


def _link(api: httpx.Client, name: str, *ips: str) -> str:
    body = {"name": name, "authentication_type": "TOKEN"}
    if ips:
        body["ip_access_list"] = {"allowed_ip_addresses": list(ips)}
    made = api.post(f"{UC}/recipients", json=body)
    assert made.status_code == 200, made.text
    url: str = made.json()["activation_url"]
    return url.rsplit("/", 1)[1]


def _error(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.json()["error_code"] == code


def test_a_link_works_once_on_the_admin_listener_without_a_token(
    catalog_admin_server: CatalogAdminServer, api: httpx.Client
) -> None:
    admin = catalog_admin_server.running.admin
    link = _link(api, "act_admin")
    assert httpx.get(f"{admin}{INFO}/{link}").json() == {}
    answer = httpx.get(f"{admin}{PUBLIC}/{link}")
    assert answer.status_code == 200, answer.text
    assert answer.headers["cache-control"] == "no-store"
    profile = answer.json()
    assert profile["endpoint"] == catalog_admin_server.running.sharing.url
    assert profile["bearerToken"].startswith("dpt_")
    _error(httpx.get(f"{admin}{PUBLIC}/{link}"), 404, "RESOURCE_DOES_NOT_EXIST")
    _error(httpx.get(f"{admin}{INFO}/{link}"), 404, "RESOURCE_DOES_NOT_EXIST")
    _error(httpx.get(f"{admin}{PUBLIC}/not-a-link"), 404, "RESOURCE_DOES_NOT_EXIST")
    api.delete(f"{UC}/recipients/act_admin")


@pytest.mark.parametrize("first", ["admin", "sharing"])
def test_a_link_is_used_once_across_both_listeners(
    catalog_admin_server: CatalogAdminServer, api: httpx.Client, first: str
) -> None:
    running = catalog_admin_server.running
    origins = {"admin": running.admin, "sharing": running.sharing.url.split("/delta-sharing")[0]}
    second = origins["sharing" if first == "admin" else "admin"]
    link = _link(api, f"act_once_{first}")
    assert httpx.get(f"{origins[first]}{PUBLIC}/{link}").status_code == 200
    assert httpx.get(f"{second}{PUBLIC}/{link}").status_code == 404
    api.delete(f"{UC}/recipients/act_once_{first}")


def test_a_link_outside_the_ip_list_is_403_and_stays_usable(
    catalog_admin_server: CatalogAdminServer, api: httpx.Client
) -> None:
    admin = catalog_admin_server.running.admin
    link = _link(api, "act_far", "192.0.2.0/24")
    forged = {"X-Forwarded-For": "192.0.2.7"}
    _error(httpx.get(f"{admin}{PUBLIC}/{link}", headers=forged), 403, "PERMISSION_DENIED")
    _error(httpx.get(f"{admin}{INFO}/{link}"), 403, "PERMISSION_DENIED")
    api.patch(f"{UC}/recipients/act_far", json={"ip_access_list": {}})
    assert httpx.get(f"{admin}{PUBLIC}/{link}").status_code == 200
    api.delete(f"{UC}/recipients/act_far")


@pytest.fixture(scope="module")
def behind_a_proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AdminServer]:
    """A catalog server whose proxies are on loopback (``trustedProxies``)."""
    tmp = tmp_path_factory.mktemp("behind-a-proxy")
    url = f"sqlite:///{tmp}/catalog.db"
    SqlCatalog(url)
    port = free_port()
    config = {
        "signingKey": "a-key-for-proxy-tests",
        "trustedProxies": ["127.0.0.0/8"],
        "admin": {"port": port, "tokens": [ADMIN_TOKEN]},
    }
    sharing = start_server(config, tmp / "server", catalog=url)
    yield _await_admin(sharing, port)
    stop_server(sharing)


def test_behind_a_trusted_proxy_the_forwarded_address_is_judged(
    behind_a_proxy: AdminServer,
) -> None:
    with behind_a_proxy.api() as api:
        link = _link(api, "act_proxied", "192.0.2.0/24")
    public = f"{behind_a_proxy.admin}{PUBLIC}/{link}"
    _error(httpx.get(public), 403, "PERMISSION_DENIED")
    _error(httpx.get(public, headers={"X-Forwarded-For": "198.51.100.1"}), 403, "PERMISSION_DENIED")
    assert httpx.get(public, headers={"X-Forwarded-For": "192.0.2.7"}).status_code == 200


def test_a_rotation_ends_an_unused_link(
    catalog_admin_server: CatalogAdminServer, api: httpx.Client
) -> None:
    admin = catalog_admin_server.running.admin
    first = _link(api, "act_rotated")
    rotated = api.post(
        f"{UC}/recipients/act_rotated/rotate-token", json={"existing_token_expire_in_seconds": 60}
    ).json()
    _error(httpx.get(f"{admin}{PUBLIC}/{first}"), 404, "RESOURCE_DOES_NOT_EXIST")
    assert httpx.get(rotated["activation_url"]).status_code == 200
    assert api.get(f"{UC}/recipients/act_rotated").json()["activated"] is True
    api.delete(f"{UC}/recipients/act_rotated")


def test_links_that_open_nothing_count_in_the_admin_listeners_limit(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/catalog.db"
    SqlCatalog(url)
    port = free_port()
    admin = {"port": port, "tokens": [ADMIN_TOKEN], "failedAuthLimit": 3}
    config = {
        "signingKey": "a-key-for-the-limit",
        "admin": {**admin, "failedAuthWindowSeconds": 3600},
    }
    running = _await_admin(start_server(config, tmp_path / "server", catalog=url), port)
    try:
        with running.api() as api:
            link = _link(api, "act_limited")
        guesses = [httpx.get(f"{running.admin}{INFO}/guessed-{i}") for i in range(3)]
        assert [g.status_code for g in guesses] == [404] * 3
        refused = httpx.get(f"{running.admin}{PUBLIC}/{link}")  # the right link
        _error(refused, 429, "TOO_MANY_REQUESTS")
        assert int(refused.headers["retry-after"]) >= 3500
        with running.api() as api:  # the admin token from that address too: one count
            assert api.get(f"{UC}/recipients").status_code == 429
        # the sharing listener keeps its own count; the refused link was not used up
        origin = running.sharing.url.split("/delta-sharing")[0]
        assert httpx.get(f"{origin}{PUBLIC}/{link}").status_code == 200
    finally:
        stop_server(running.sharing)
