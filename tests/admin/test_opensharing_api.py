"""OpenSharing's provider API prefix (``/api/2.1/opensharing/provider``) over raw HTTP: the
same resources as Unity Catalog's prefix, answered by the same handlers (a change through
one is seen through the other), behind the admin token, errors as ``{"error_code",
"message"}``; and OpenSharing's activation route."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from admin_support import CatalogAdminServer

OS = "/api/2.1/opensharing/provider"
UC = "/api/2.1/unity-catalog"
ROUTES = [
    ("POST", "/shares"),
    ("GET", "/shares"),
    ("GET", "/shares/x"),
    ("PATCH", "/shares/x"),
    ("DELETE", "/shares/x"),
    ("GET", "/shares/x/permissions"),
    ("PATCH", "/shares/x/permissions"),
    ("POST", "/recipients"),
    ("GET", "/recipients"),
    ("GET", "/recipients/x"),
    ("PATCH", "/recipients/x"),
    ("DELETE", "/recipients/x"),
    ("POST", "/recipients/x/rotate-token"),
    ("GET", "/recipients/x/share-permissions"),
]


@pytest.fixture
def api(catalog_admin_server: CatalogAdminServer) -> Iterator[httpx.Client]:
    with catalog_admin_server.running.api() as client:
        yield client


def _error(response: httpx.Response, status: int, code: str, *words: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error_code", "message"} and body["error_code"] == code, body
    for word in words:
        assert word in body["message"], body["message"]


@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_every_route_needs_the_admin_token(
    catalog_admin_server: CatalogAdminServer, method: str, path: str
) -> None:
    with catalog_admin_server.running.api(None) as client:
        _error(client.request(method, OS + path, json={}), 401, "UNAUTHENTICATED")


@pytest.mark.parametrize(("method", "path"), [r for r in ROUTES if "/x" in r[1]])
def test_a_missing_share_or_recipient_is_404(api: httpx.Client, method: str, path: str) -> None:
    body = {"existing_token_expire_in_seconds": 0} if path.endswith("rotate-token") else {}
    response = api.request(method, OS + path.replace("/x", "/ghost"), json=body)
    _error(response, 404, "RESOURCE_DOES_NOT_EXIST", "ghost")


def test_the_same_resources_as_unity_catalogs(
    catalog_admin_server: CatalogAdminServer, api: httpx.Client
) -> None:
    made = api.post(f"{OS}/shares", json={"name": "os_share", "comment": "through OpenSharing"})
    assert made.status_code == 200, made.text
    assert api.get(f"{UC}/shares/os_share").json() == made.json()
    _error(api.post(f"{UC}/shares", json={"name": "os_share"}), 409, "RESOURCE_ALREADY_EXISTS")
    _error(
        api.post(f"{OS}/recipients", json={"name": "os_r", "authentication_type": "TOKEN", "x": 1}),
        400,
        "INVALID_PARAMETER_VALUE",
        "x",
    )
    recipient = api.post(
        f"{OS}/recipients",
        json={
            "name": "os_partner",
            "authentication_type": "TOKEN",
            "ip_access_list": {"allowed_ip_addresses": ["127.0.0.1"]},
        },
    ).json()
    granted = api.patch(
        f"{OS}/shares/os_share/permissions",
        json={"changes": [{"principal": "os_partner", "add": ["SELECT"]}]},
    )
    assert granted.json() == {
        "privilege_assignments": [{"principal": "os_partner", "privileges": ["SELECT"]}]
    }
    assert (
        api.get(f"{UC}/recipients/os_partner/share-permissions").json()
        == api.get(f"{OS}/recipients/os_partner/share-permissions").json()
    )

    # OpenSharing's activation route, on the admin listener: once, without a token
    link = recipient["activation_url"].rsplit("/", 1)[1]
    activation = catalog_admin_server.running.admin + "/api/2.1/opensharing/activation/" + link
    profile = httpx.get(activation).json()
    assert profile["bearerToken"].startswith("dpt_")
    _error(httpx.get(activation), 404, "RESOURCE_DOES_NOT_EXIST")
    assert api.get(f"{OS}/recipients/os_partner").json()["activated"] is True

    assert api.delete(f"{OS}/recipients/os_partner").status_code == 200
    assert api.delete(f"{OS}/shares/os_share").status_code == 200
    _error(api.get(f"{UC}/shares/os_share"), 404, "RESOURCE_DOES_NOT_EXIST")
