"""Listing routes, paging, page-token forgery, names and authentication (real server)."""

from __future__ import annotations

from typing import Any

import httpx

from sharing_server import RunningServer


def collect(client: httpx.Client, path: str, page_size: int) -> tuple[list[dict[str, Any]], int]:
    items: list[dict[str, Any]] = []
    pages = 0
    params: dict[str, Any] = {"maxResults": page_size}
    while True:
        response = client.get(path, params=params)
        assert response.status_code == 200, response.text
        body = response.json()
        pages += 1
        items += body.get("items", [])
        token = body.get("nextPageToken")
        if not token:
            return items, pages
        params = {"maxResults": page_size, "pageToken": token}


def test_list_shares_with_extras(client: httpx.Client) -> None:
    response = client.get("/shares")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    items = response.json()["items"]
    assert [s["name"] for s in items] == ["Sales", "empty_share", "third"]
    assert items[0] == {
        "name": "Sales",
        "id": "00000000-0000-0000-0000-00000000000a",
        "comment": "sales data",
    }
    assert items[2]["displayName"] == "Third share"
    assert "nextPageToken" not in response.json()


def test_paging_visits_every_item_once(client: httpx.Client) -> None:
    shares, pages = collect(client, "/shares", 1)
    assert [s["name"] for s in shares] == ["Sales", "empty_share", "third"]
    assert pages == 3
    tables, pages = collect(client, "/shares/sales/all-tables", 2)
    assert [t["name"] for t in tables] == ["parted", "basic", "dv", "cm", "many", "again"]
    assert pages == 3


def test_max_results_zero_answers_no_items_and_no_token(client: httpx.Client) -> None:
    # the protocol: "0 will return no results"; a token to the same offset would page forever
    for path in (
        "/shares",
        "/shares/sales/schemas",
        "/shares/sales/schemas/default/tables",
        "/shares/sales/all-tables",
    ):
        response = client.get(path, params={"maxResults": 0})
        assert response.status_code == 200, path
        assert response.json().get("items", []) == [], path
        assert "nextPageToken" not in response.json(), path
        token = client.get(path, params={"maxResults": 1}).json()["nextPageToken"]
        response = client.get(path, params={"maxResults": 0, "pageToken": token})
        assert response.status_code == 200, path
        assert response.json().get("items", []) == [], path
        assert "nextPageToken" not in response.json(), path
        forged = client.get(path, params={"maxResults": 0, "pageToken": token[:-3]})
        assert forged.status_code == 400, path


def test_forged_and_foreign_page_tokens_are_rejected(client: httpx.Client) -> None:
    token = client.get("/shares", params={"maxResults": 1}).json()["nextPageToken"]
    assert client.get("/shares", params={"pageToken": token}).status_code == 200
    forged = token[:-2] + ("AA" if not token.endswith("AA") else "BB")
    for bad in (forged, "not-a-token", "AAAA"):
        response = client.get("/shares", params={"pageToken": bad})
        assert response.status_code == 400
        assert response.json()["errorCode"] == "INVALID_PARAMETER_VALUE"
    # a token of the share listing is not valid for the schema listing, nor another share's
    schema_token = client.get("/shares/sales/schemas", params={"maxResults": 1}).json()
    response = client.get("/shares/sales/schemas", params={"pageToken": token})
    assert response.status_code == 400
    response = client.get(
        "/shares/third/schemas", params={"pageToken": schema_token["nextPageToken"]}
    )
    assert response.status_code == 400


def test_bad_max_results(client: httpx.Client) -> None:
    for value in ("-1", "-500", "ten", "1.5"):
        response = client.get("/shares", params={"maxResults": value})
        assert response.status_code == 400, value
        assert response.json()["errorCode"] == "INVALID_PARAMETER_VALUE"


def test_names_are_case_insensitive(client: httpx.Client) -> None:
    assert client.get("/shares/SALES").json() == {
        "share": {
            "name": "Sales",
            "id": "00000000-0000-0000-0000-00000000000a",
            "comment": "sales data",
        }
    }
    schemas = client.get("/shares/sAlEs/schemas").json()["items"]
    assert schemas == [{"name": "Default", "share": "Sales"}, {"name": "other", "share": "Sales"}]
    tables = client.get("/shares/sales/schemas/DEFAULT/tables").json()["items"]
    assert tables[0] == {
        "name": "parted",
        "schema": "Default",
        "share": "Sales",
        "shareId": "00000000-0000-0000-0000-00000000000a",
        "id": "t-p",
        "accessModes": ["url"],
    }
    assert tables[1]["properties"] == {"k": "v"}
    version = client.get("/shares/SALES/schemas/default/tables/PARTED/version")
    assert version.status_code == 200


def test_unknown_objects_are_404(client: httpx.Client) -> None:
    for path in (
        "/shares/nope",
        "/shares/nope/schemas",
        "/shares/sales/schemas/nope/tables",
        "/shares/nope/all-tables",
        "/shares/sales/schemas/default/tables/nope/version",
        "/shares/sales/schemas/default/tables/nope/metadata",
        "/no/such/route",
    ):
        response = client.get(path)
        assert response.status_code == 404, path
        assert response.json()["errorCode"] == "RESOURCE_DOES_NOT_EXIST"
    response = client.post("/shares/sales/schemas/default/tables/nope/query", json={})
    assert response.status_code == 404
    assert client.head("/shares/sales/schemas/default/tables/nope").status_code == 404


def test_wrong_method_is_405(client: httpx.Client) -> None:
    response = client.delete("/shares")
    assert response.status_code == 405
    assert response.json()["errorCode"] == "METHOD_NOT_ALLOWED"


def test_authentication(server: RunningServer) -> None:
    for token in (None, "wrong-token", "test-token-4f1c9e-and-more"):
        with server.client(token) as anonymous:
            for response in (
                anonymous.get("/shares"),
                anonymous.get("/shares/sales/schemas/default/tables/basic/version"),
                anonymous.post("/shares/sales/schemas/default/tables/basic/query", json={}),
            ):
                assert response.status_code == 401
                body = response.json()
                assert body["errorCode"] == "UNAUTHENTICATED"
                assert "test-token" not in response.text
    with server.client(None) as basic:
        assert basic.get("/shares", headers={"Authorization": "Basic abc"}).status_code == 401
    assert "test-token-4f1c9e" not in server.log()
