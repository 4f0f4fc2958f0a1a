"""Every route of the provider API in Unity Catalog's shape over raw HTTP: valid, invalid
(400 naming the field), unauthorised (401), missing (404); errors as
``{"error_code", "message"}``."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from admin_support import AdminServer, CatalogAdminServer
from waiting import wait_until

UC = "/api/2.1/unity-catalog"

ROUTES = [
    ("POST", f"{UC}/shares"),
    ("GET", f"{UC}/shares"),
    ("GET", f"{UC}/shares/{{share}}"),
    ("PATCH", f"{UC}/shares/{{share}}"),
    ("DELETE", f"{UC}/shares/{{share}}"),
    ("GET", f"{UC}/shares/{{share}}/permissions"),
    ("PATCH", f"{UC}/shares/{{share}}/permissions"),
    ("POST", f"{UC}/recipients"),
    ("GET", f"{UC}/recipients"),
    ("GET", f"{UC}/recipients/{{recipient}}"),
    ("PATCH", f"{UC}/recipients/{{recipient}}"),
    ("DELETE", f"{UC}/recipients/{{recipient}}"),
    ("POST", f"{UC}/recipients/{{recipient}}/rotate-token"),
    ("GET", f"{UC}/recipients/{{recipient}}/share-permissions"),
]
"""Every route, as the admin OpenAPI document names it."""


@pytest.fixture
def api(catalog_admin_server: CatalogAdminServer) -> Iterator[httpx.Client]:
    with catalog_admin_server.running.api() as client:
        yield client


def _error(response: httpx.Response, status: int, code: str, *words: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error_code", "message"}, body
    assert body["error_code"] == code
    for word in words:
        assert word in body["message"], body["message"]


def _path(template: str, name: str) -> str:
    return template.replace("{share}", name).replace("{recipient}", name)


@pytest.mark.parametrize(("method", "path"), ROUTES)
@pytest.mark.parametrize("token", [None, "wrong-token"])
def test_every_route_needs_the_admin_token(
    catalog_admin_server: CatalogAdminServer, method: str, path: str, token: str | None
) -> None:
    with catalog_admin_server.running.api(token) as client:
        response = client.request(method, _path(path, "sales"), json={})
    _error(response, 401, "UNAUTHENTICATED")


def _body_for(method: str, path: str) -> dict[str, Any] | None:
    if path.endswith("rotate-token"):
        return {"existing_token_expire_in_seconds": 0}
    if path.endswith("/permissions") and method == "PATCH":
        return {"changes": []}
    return {} if method == "PATCH" else None


@pytest.mark.parametrize(
    ("method", "path"), [r for r in ROUTES if "{" in r[1]], ids=lambda r: str(r)
)
def test_a_missing_share_or_recipient_is_404(api: httpx.Client, method: str, path: str) -> None:
    response = api.request(method, _path(path, "ghost"), json=_body_for(method, path))
    _error(response, 404, "RESOURCE_DOES_NOT_EXIST", "ghost")


def test_unknown_routes_and_the_databricks_config_are_404_in_this_shape(
    catalog_admin_server: CatalogAdminServer, api: httpx.Client
) -> None:
    _error(api.get(f"{UC}/catalogs"), 404, "RESOURCE_DOES_NOT_EXIST")
    # asked by the SDK before anything else, without a token
    response = httpx.get(catalog_admin_server.running.admin + "/.well-known/databricks-config")
    _error(response, 404, "RESOURCE_DOES_NOT_EXIST")
    _error(api.put(f"{UC}/shares"), 405, "METHOD_NOT_ALLOWED")


def test_a_share_through_its_life(api: httpx.Client, admin_tables: dict[str, Path]) -> None:
    created = api.post(f"{UC}/shares", json={"name": "raw_share", "comment": "c1"})
    assert created.status_code == 200, created.text
    assert created.json()["name"] == "raw_share"
    assert created.json()["comment"] == "c1"
    _error(api.post(f"{UC}/shares", json={"name": "raw_share"}), 409, "RESOURCE_ALREADY_EXISTS")
    parted = str(admin_tables["parted"])
    add = {
        "action": "ADD",
        "data_object": {
            "name": parted,
            "data_object_type": "TABLE",
            "shared_as": "sales.parted",
            "history_data_sharing_status": "ENABLED",
            "start_version": 1,
            "comment": "by region",
            "partitions": [
                {"values": [{"name": "region", "op": "EQUAL", "recipient_property_key": "region"}]},
                {"values": [{"name": "region", "op": "EQUAL", "value": "asia"}]},
            ],
        },
    }
    changed = api.patch(f"{UC}/shares/raw_share", json={"comment": "c2", "updates": [add]})
    assert changed.status_code == 200, changed.text
    share = changed.json()
    assert share["comment"] == "c2"
    (obj,) = share["objects"]
    assert obj == {
        "name": parted,
        "data_object_type": "TABLE",
        "shared_as": "sales.parted",
        "history_data_sharing_status": "ENABLED",
        "start_version": 1,
        "status": "ACTIVE",
        "comment": "by region",
        "partition_filter": "(`region` = CURRENT_RECIPIENT('region')) OR (`region` = 'asia')",
        "partitions": add["data_object"]["partitions"],
    }
    assert api.get(f"{UC}/shares/raw_share").json() == share
    assert "objects" not in api.get(f"{UC}/shares/raw_share?include_shared_data=false").json()

    # UPDATE keeps what it does not name; found by its location alone
    update = {"action": "UPDATE", "data_object": {"name": parted, "start_version": 2}}
    (obj,) = api.patch(f"{UC}/shares/raw_share", json={"updates": [update]}).json()["objects"]
    assert (obj["start_version"], obj["comment"]) == (2, "by region")
    assert obj["history_data_sharing_status"] == "ENABLED"
    unfiltered = {"action": "UPDATE", "data_object": {"name": parted, "partitions": []}}
    (obj,) = api.patch(f"{UC}/shares/raw_share", json={"updates": [unfiltered]}).json()["objects"]
    assert "partition_filter" not in obj and "partitions" not in obj
    api.patch(f"{UC}/shares/raw_share", json={"updates": [add | {"action": "UPDATE"}]})

    # a recipient with the property reads its partitions through the sharing listener
    made = api.post(
        f"{UC}/recipients",
        json={
            "name": "raw_reader",
            "authentication_type": "TOKEN",
            "properties_kvpairs": {"properties": {"region": "eu"}},
        },
    )
    assert made.status_code == 200, made.text
    profile = httpx.get(made.json()["activation_url"]).json()
    granted = api.patch(
        f"{UC}/shares/raw_share/permissions",
        json={"changes": [{"principal": "raw_reader", "add": ["SELECT"]}]},
    )
    assert granted.json() == {
        "privilege_assignments": [{"principal": "raw_reader", "privileges": ["SELECT"]}]
    }
    headers = {"Authorization": f"Bearer {profile['bearerToken']}"}
    url = profile["endpoint"] + "/shares/raw_share/schemas/sales/tables/parted/query"
    answer = wait_until(
        lambda: (a := httpx.post(url, json={}, headers=headers)).status_code == 200 and a,
        10,
        "the query to be answered",
    )
    regions = {
        json.loads(line)["file"]["partitionValues"]["region"]
        for line in answer.text.splitlines()
        if '"file"' in line
    }
    assert regions == {"eu", "asia"}

    removed = api.patch(
        f"{UC}/shares/raw_share",
        json={
            "updates": [
                {"action": "REMOVE", "data_object": {"name": "x", "shared_as": "sales.parted"}}
            ]
        },
    )
    assert removed.json()["objects"] == []
    assert api.delete(f"{UC}/recipients/raw_reader").json() == {}
    assert api.delete(f"{UC}/shares/raw_share").json() == {}


@pytest.fixture
def share(api: httpx.Client, admin_tables: dict[str, Path]) -> Iterator[str]:
    api.post(f"{UC}/shares", json={"name": "bad_share"})
    add = {"name": str(admin_tables["parted"]), "shared_as": "s.t"}
    assert (
        api.patch(
            f"{UC}/shares/bad_share", json={"updates": [{"action": "ADD", "data_object": add}]}
        ).status_code
        == 200
    )
    yield "bad_share"
    api.delete(f"{UC}/shares/bad_share")


@pytest.mark.parametrize(
    ("data_object", "field"),
    [
        ({"name": "/nowhere/at/all", "shared_as": "s.u"}, "cannot be shared"),
        ({"name": "LOC"}, "updates[0].data_object.shared_as"),
        ({"name": "LOC", "shared_as": "a.b.c"}, "updates[0].data_object.shared_as"),
        ({"name": "LOC", "shared_as": "s.u", "cdf_enabled": True}, "data_object.cdf_enabled"),
        ({"name": "LOC", "shared_as": "s.u", "content": "x"}, "data_object.content"),
        ({"name": "LOC", "shared_as": "s.u", "data_object_type": "VIEW"}, "data_object_type"),
        (
            {"name": "LOC", "shared_as": "s.u", "history_data_sharing_status": "MAYBE"},
            "history_data_sharing_status",
        ),
        ({"name": "LOC", "shared_as": "s.u", "start_version": -1}, "start_version"),
        (
            {
                "name": "LOC",
                "shared_as": "s.u",
                "partitions": [{"values": [{"name": "region", "op": "LIKE", "value": "e%"}]}],
            },
            "partitions[0].values[0].op",
        ),
        (
            {
                "name": "LOC",
                "shared_as": "s.u",
                "partitions": [{"values": [{"name": "value", "value": "1"}]}],
            },
            "partition",
        ),
        ({"name": "LOC", "shared_as": "s.u", "color": "red"}, "color"),
        ({"name": "LOC", "shared_as": "s.t"}, "exists already"),
    ],
)
def test_an_invalid_update_is_400_naming_the_field_and_changes_nothing(
    api: httpx.Client,
    share: str,
    admin_tables: dict[str, Path],
    data_object: dict[str, Any],
    field: str,
) -> None:
    before = api.get(f"{UC}/shares/{share}").json()
    obj = {k: str(admin_tables["parted"]) if v == "LOC" else v for k, v in data_object.items()}
    second = {
        "action": "ADD",
        "data_object": {"name": str(admin_tables["left"]), "shared_as": "s.ok"},
    }
    response = api.patch(
        f"{UC}/shares/{share}",
        json={"comment": "changed", "updates": [{"action": "ADD", "data_object": obj}, second]},
    )
    status = 409 if field == "exists already" else 400
    code = "RESOURCE_ALREADY_EXISTS" if status == 409 else "INVALID_PARAMETER_VALUE"
    _error(response, status, code, field)
    assert api.get(f"{UC}/shares/{share}").json() == before


@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        ("POST", "/shares", {"name": "x", "storage_root": "s3://b"}, "storage_root"),
        ("POST", "/shares", {"name": "a.b"}, "share name"),
        ("POST", "/shares", {}, "name"),
        ("PATCH", "/shares/bad_share", {"new_name": "y"}, "new_name"),
        ("PATCH", "/shares/bad_share", {"owner": "y"}, "owner"),
        (
            "PATCH",
            "/shares/bad_share",
            {"updates": [{"action": "MOVE", "data_object": {"name": "x"}}]},
            "updates[0].action",
        ),
        (
            "PATCH",
            "/shares/bad_share/permissions",
            {"changes": [{"add": ["SELECT"]}]},
            "changes[0].principal",
        ),
        (
            "PATCH",
            "/shares/bad_share/permissions",
            {"changes": [{"principal": "p", "add": ["MODIFY"]}]},
            "changes[0].add",
        ),
        (
            "PATCH",
            "/shares/bad_share/permissions",
            {"changes": [{"principal": "p", "remove": ["ALL_PRIVILEGES"]}]},
            "changes[0].remove",
        ),
        ("POST", "/recipients", {"name": "r"}, "authentication_type"),
        (
            "POST",
            "/recipients",
            {"name": "r", "authentication_type": "DATABRICKS"},
            "authentication_type",
        ),
        (
            "POST",
            "/recipients",
            {
                "name": "r",
                "authentication_type": "TOKEN",
                "ip_access_list": {"allowed_ip_addresses": ["10.0.0.0/8", "10.1.2.3/8"]},
            },
            "ip_access_list.allowed_ip_addresses: the list entry 2: '10.1.2.3/8' has host bits",
        ),
        (
            "POST",
            "/recipients",
            {
                "name": "r",
                "authentication_type": "OAUTH_CLIENT_CREDENTIALS",
                "ip_access_list": {"allowed_ip_addresses": [f"10.0.0.{i}" for i in range(101)]},
            },
            "ip_access_list.allowed_ip_addresses: the list has 101 entries; at most 100",
        ),
        (
            "POST",
            "/recipients",
            {"name": "r", "authentication_type": "TOKEN", "ip_access_list": {"ips": []}},
            "ip_access_list",
        ),
        (
            "POST",
            "/recipients",
            {"name": "r", "authentication_type": "TOKEN", "sharing_code": "x"},
            "sharing_code",
        ),
        (
            "POST",
            "/recipients",
            {"name": "r", "authentication_type": "TOKEN", "expiration_time": 1000},
            "expiration_time",
        ),
        (
            "POST",
            "/recipients",
            {
                "name": "r",
                "authentication_type": "TOKEN",
                "properties_kvpairs": {"properties": {"k": 1}},
            },
            "properties",
        ),
        (
            "PATCH",
            "/recipients/holder",
            {
                "comment": "not kept",
                "ip_access_list": {"allowed_ip_addresses": ["192.0.2.1", "a host"]},
            },
            "ip_access_list.allowed_ip_addresses: the list entry 2: 'a host' is not an IP",
        ),
        ("PATCH", "/recipients/holder", {"new_name": "z"}, "new_name"),
        ("PATCH", "/recipients/holder", {"expiration_time": 1}, "expiration_time"),
        (
            "POST",
            "/recipients/holder/rotate-token",
            {"existing_token_expire_in_seconds": -1},
            "existing_token_expire_in_seconds",
        ),
        ("POST", "/recipients/holder/rotate-token", {}, "existing_token_expire_in_seconds"),
        (
            "POST",
            "/recipients/holder/rotate-token",
            {"existing_token_expire_in_seconds": 0, "name": "someone_else"},
            "name",
        ),
        (
            "POST",
            "/recipients",
            {
                "name": "r",
                "authentication_type": "TOKEN",
                "properties_kvpairs": {
                    "properties": [{"key": "a", "value": "1"}, {"key": "a", "value": "2"}]
                },
            },
            "properties_kvpairs.properties: 'a' is given twice",
        ),
        ("GET", "/shares?max_results=-1", None, "max_results"),
        ("GET", "/recipients?max_results=ten", None, "max_results"),
        ("GET", "/shares?page_token=%25%25", None, "page_token"),
    ],
)
def test_invalid_requests_are_400_naming_the_field(
    api: httpx.Client, share: str, method: str, path: str, body: dict[str, Any] | None, field: str
) -> None:
    api.post(f"{UC}/recipients", json={"name": "holder", "authentication_type": "TOKEN"})
    before = api.get(f"{UC}/recipients/holder").json()
    response = api.request(method, UC + path, json=body)
    _error(response, 400, "INVALID_PARAMETER_VALUE", field)
    assert api.get(f"{UC}/recipients/holder").json() == before


def test_a_body_that_is_not_json_is_400(api: httpx.Client) -> None:
    response = api.post(
        f"{UC}/shares", content=b"{not json", headers={"content-type": "application/json"}
    )
    _error(response, 400, "MALFORMED_REQUEST")


def test_a_recipient_through_its_life(api: httpx.Client) -> None:
    ends = int((time.time() + 86400) * 1000)
    made = api.post(
        f"{UC}/recipients",
        json={
            "name": "lifer",
            "authentication_type": "TOKEN",
            "comment": "first",
            "properties_kvpairs": {"properties": {"country": "fr"}},
            "expiration_time": ends,
        },
    ).json()
    assert (made["name"], made["comment"], made["authentication_type"]) == (
        "lifer",
        "first",
        "TOKEN",
    )
    # the credential is handed over by the link, once; the answers never show a token
    assert (made["activated"], made["tokens"]) == (
        False,
        [{"activation_url": made["activation_url"]}],
    )
    profile = httpx.get(made["activation_url"]).json()
    assert profile["bearerToken"].startswith("dpt_")
    assert abs(int(profile["expirationTime"][:4]) - time.gmtime(ends / 1000).tm_year) <= 1
    got = api.get(f"{UC}/recipients/lifer").json()
    assert profile["bearerToken"] not in json.dumps(got)
    assert "activation_url" not in got and got["activated"] is True
    assert abs(got["expiration_time"] - ends) <= 2000
    (token,) = got["tokens"]

    changed = api.patch(
        f"{UC}/recipients/lifer", json={"properties_kvpairs": {"properties": {"country": "de"}}}
    ).json()
    assert changed["properties_kvpairs"] == {"properties": {"country": "de"}}
    assert changed["comment"] == "first"
    assert "comment" not in api.patch(f"{UC}/recipients/lifer", json={"comment": None}).json()

    # rotate: 0 ends the old token at once; the new one comes by a new link
    rotated = api.post(
        f"{UC}/recipients/lifer/rotate-token", json={"existing_token_expire_in_seconds": 0}
    ).json()
    assert rotated["activated"] is False
    assert rotated["tokens"] == [{"activation_url": rotated["activation_url"]}]
    new_profile = httpx.get(rotated["activation_url"]).json()
    assert new_profile["bearerToken"] != profile["bearerToken"]
    assert api.get(f"{UC}/recipients/lifer").json()["tokens"][0]["id"] != token["id"]
    # the sharing listener sees it: the old token refused, the new one taken
    shares = profile["endpoint"] + "/shares"
    old = {"Authorization": f"Bearer {profile['bearerToken']}"}
    new = {"Authorization": f"Bearer {new_profile['bearerToken']}"}
    wait_until(lambda: httpx.get(shares, headers=new).status_code == 200, 10, "the new token")
    assert httpx.get(shares, headers=old).status_code == 401
    assert api.get(f"{UC}/recipients/lifer/share-permissions").json() == {"permissions_out": []}
    assert api.delete(f"{UC}/recipients/lifer").status_code == 200
    _error(api.get(f"{UC}/recipients/lifer"), 404, "RESOURCE_DOES_NOT_EXIST")


def test_lists_page(api: httpx.Client) -> None:
    for i in range(5):
        api.post(f"{UC}/recipients", json={"name": f"pager_{i}", "authentication_type": "TOKEN"})
    seen: list[str] = []
    token = None
    while True:
        params = {"max_results": "2", **({"page_token": token} if token else {})}
        answer = api.get(f"{UC}/recipients", params=params).json()
        assert len(answer["recipients"]) <= 2
        seen += [r["name"] for r in answer["recipients"]]
        token = answer.get("next_page_token")
        if not token:
            break
    assert [n for n in seen if n.startswith("pager_")] == [f"pager_{i}" for i in range(5)]
    everything = api.get(f"{UC}/recipients", params={"max_results": "0"}).json()
    assert [r["name"] for r in everything["recipients"]] == seen
    assert "next_page_token" not in everything
    for i in range(5):
        api.delete(f"{UC}/recipients/pager_{i}")


def test_a_body_past_the_limit_is_413(api: httpx.Client) -> None:
    response = api.post(f"{UC}/shares", json={"name": "big", "comment": "x" * 20_000_000})
    _error(response, 413, "REQUEST_TOO_LARGE", "maxRequestBodyBytes")
    assert api.get(f"{UC}/shares/big").status_code == 404


def test_no_provider_api_without_a_catalog_database(admin_server: AdminServer) -> None:
    """A server on a YAML configuration has no catalog to manage: 404 in this shape."""
    with admin_server.api() as client:
        _error(client.get(f"{UC}/shares"), 404, "RESOURCE_DOES_NOT_EXIST")
        _error(client.get("/.well-known/databricks-config"), 404, "RESOURCE_DOES_NOT_EXIST")
