"""The console's management pages over HTTP against a real catalog server: OAuth clients
and activation links shown once, the confirmations and what they change, the partition
filter check naming the recipients that lack a property, every change audited as the
signed-in admin token's, and every form refused without the session's CSRF token."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from admin_support import CatalogAdminServer, login, start_empty_catalog_server
from corpus import corpus_table
from deltaport.catalog.rows import RecipientSpec, TableSpec
from sharing_server import stop_server
from waiting import wait_until

PARTITIONED = "dat__basic_partitioned"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CatalogAdminServer]:
    running = start_empty_catalog_server(tmp_path_factory.mktemp("console-manage-http"))
    yield running
    stop_server(running.running.sharing)


@pytest.fixture
def console(server: CatalogAdminServer) -> Iterator[httpx.Client]:
    with login(server.running) as client:
        yield client


def csrf(client: httpx.Client) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', client.get("/console/shares").text)
    assert found
    return found.group(1)


def post(client: httpx.Client, path: str, **fields: str) -> httpx.Response:
    return client.post(path, data={"csrf": csrf(client), **fields})


def shown_profile(answer: httpx.Response) -> dict[str, Any]:
    found = re.search(r'<pre id="profile">([^<]*)</pre>', answer.text)
    assert found, answer.text
    return json.loads(html.unescape(found.group(1)))


def test_an_oauth_recipient_and_an_activation_link_are_shown_once(
    server: CatalogAdminServer, console: httpx.Client
) -> None:
    created = post(
        console,
        "/console/recipients",
        name="oauth-partner",
        authentication_type="OAUTH_CLIENT_CREDENTIALS",
    )
    assert created.status_code == 200
    profile = shown_profile(created)
    assert profile["type"] == "oauth_client_credentials"
    assert profile["clientSecret"].startswith("dps_")
    page = console.get("/console/recipients/oauth-partner").text
    assert profile["clientSecret"] not in page
    assert "OAuth client credentials" in page
    assert f"OAuth client {profile['clientId']}" in page
    seen = re.search(r'name="seen" value="(\d+)"', page)
    assert seen
    rotate = {"grace": "0s", "seen": seen.group(1)}
    rotated = shown_profile(post(console, "/console/recipients/oauth-partner/rotate", **rotate))
    assert rotated["type"] == "oauth_client_credentials"
    assert rotated["clientId"] != profile["clientId"]
    page = console.get("/console/recipients/oauth-partner").text
    assert rotated["clientSecret"] not in page
    assert page.count("does not expire") == 1  # the old client ended now, the new one lasts
    # the same form sent again (a reload of the new profile's page) rotates nothing
    again = post(console, "/console/recipients/oauth-partner/rotate", **rotate)
    assert again.status_code == 400 and "nothing was rotated" in again.text
    assert 'id="profile"' not in again.text
    assert page.count("OAuth client dpc_") == console.get(
        "/console/recipients/oauth-partner"
    ).text.count("OAuth client dpc_")

    linked = post(console, "/console/recipients", name="linked-partner", activation="on")
    url = re.search(r'<pre id="activation-url">([^<]*)</pre>', linked.text)
    assert url and "data_sharing_activation/" in url.group(1)
    assert url.group(1) not in console.get("/console/recipients/linked-partner").text
    assert url.group(1) not in console.get("/console/recipients").text


def test_the_filter_check_names_the_recipients_lacking_a_property(
    server: CatalogAdminServer, console: httpx.Client
) -> None:
    catalog = server.catalog
    catalog.create_share("checked")
    catalog.create_recipient("has-letter", RecipientSpec(properties={"letter": "a"}))
    catalog.create_recipient("no-letter", RecipientSpec(properties={"other": "x"}))
    catalog.create_recipient("not-granted")
    catalog.grant("checked", "has-letter")
    catalog.grant("checked", "no-letter")
    params = {
        "location": str(corpus_table(PARTITIONED).path),
        "partition_filter": "letter = CURRENT_RECIPIENT('letter')",
    }
    report = console.get("/console/shares/checked/filter-check", params=params).text
    assert "<code>letter</code>" in report  # the partition column
    lacking = re.search(r'class="lacking">(.*?)</span>', report, re.DOTALL)
    assert lacking and "no-letter" in lacking.group(1)
    assert "has-letter" not in lacking.group(1) and "not-granted" not in lacking.group(1)
    wrong = console.get(
        "/console/shares/checked/filter-check", params={**params, "partition_filter": "number = 1"}
    ).text
    assert "not a partition column" in wrong
    relative = console.get(
        "/console/shares/checked/filter-check", params={**params, "location": "relative/path"}
    ).text
    assert "relative path" in relative


def test_destructive_changes_ask_first_and_then_happen(
    server: CatalogAdminServer, console: httpx.Client
) -> None:
    catalog = server.catalog
    location = str(corpus_table(PARTITIONED).path)
    catalog.create_share("doomed")
    catalog.add_table("doomed", "s1", "a", TableSpec(location))
    catalog.add_table("doomed", "s1", "b", TableSpec(location))
    catalog.add_table("doomed", "s2", "c", TableSpec(location))
    catalog.create_recipient("leaving")
    catalog.grant("doomed", "leaving")

    def tables() -> set[str]:
        return {f"{t.schema}.{t.name}" for t in catalog.contents().tables if t.share == "doomed"}

    asked = console.get("/console/shares/doomed/schemas/s1/tables/a/remove")
    assert asked.status_code == 200 and "Stop sharing doomed.s1.a?" in html.unescape(asked.text)
    assert tables() == {"s1.a", "s1.b", "s2.c"}  # asking changes nothing
    removed = post(console, "/console/shares/doomed/schemas/s1/tables/a/remove")
    assert removed.status_code == 303 and tables() == {"s1.b", "s2.c"}
    assert post(console, "/console/shares/doomed/schemas/s1/drop").status_code == 303
    assert tables() == {"s2.c"}
    missing = post(console, "/console/shares/doomed/schemas/s1/drop")
    assert missing.status_code == 404 and "no schema doomed.s1" in missing.text

    assert console.get("/console/recipients/leaving/grants/doomed/revoke").status_code == 200
    assert post(console, "/console/recipients/leaving/grants/doomed/revoke").status_code == 303
    assert catalog.contents().recipients["leaving"].shares == ()
    assert console.get("/console/recipients/leaving/delete").status_code == 200
    assert post(console, "/console/recipients/leaving/delete").status_code == 303
    assert "leaving" not in catalog.contents().recipients
    assert post(console, "/console/shares/doomed/drop").status_code == 303
    assert "doomed" not in {s.name for s in catalog.contents().shares}
    gone = console.get("/console/recipients/leaving")
    assert gone.status_code == 404 and "does not exist" in gone.text


def test_properties_and_ip_access_list_are_saved(
    server: CatalogAdminServer, console: httpx.Client
) -> None:
    server.catalog.create_recipient("edited")
    saved = post(
        console, "/console/recipients/edited/properties", properties="country=FR\ntier = gold"
    )
    assert saved.status_code == 303
    listed = post(
        console, "/console/recipients/edited/ip-access-list", ip_access_list="10.0.0.0/8, 192.0.2.7"
    )
    assert listed.status_code == 303
    recipient = server.catalog.contents().recipients["edited"]
    assert recipient.properties == {"country": "FR", "tier": "gold"}
    assert recipient.ip_access_list == ("10.0.0.0/8", "192.0.2.7")
    bad = post(console, "/console/recipients/edited/properties", properties="no equals sign")
    assert bad.status_code == 400 and 'data-field="properties"' in bad.text
    assert server.catalog.contents().recipients["edited"].properties == recipient.properties


POSTS = [
    ("/console/shares", {"name": "csrf-share"}),
    ("/console/shares/guarded/tables", {"schema": "s", "name": "t2", "location": "/x"}),
    ("/console/shares/guarded/drop", {}),
    ("/console/shares/guarded/schemas/s/drop", {}),
    ("/console/shares/guarded/schemas/s/tables/t/remove", {}),
    ("/console/shares/guarded/schemas/s/tables/t/edit", {"partition_filter": ""}),
    ("/console/recipients", {"name": "csrf-recipient"}),
    ("/console/recipients/guard/properties", {"properties": "a=b"}),
    ("/console/recipients/guard/ip-access-list", {"ip_access_list": "10.0.0.0/8"}),
    ("/console/recipients/guard/rotate", {"grace": "0s"}),
    ("/console/recipients/guard/revoke", {}),
    ("/console/recipients/guard/delete", {}),
    ("/console/recipients/guard/grants", {"share": "guarded"}),
    ("/console/recipients/guard/grants/guarded/revoke", {}),
]


def test_every_form_is_refused_without_the_sessions_csrf_token(
    server: CatalogAdminServer, console: httpx.Client
) -> None:
    catalog = server.catalog
    catalog.create_share("guarded")
    catalog.add_table("guarded", "s", "t", TableSpec(str(corpus_table(PARTITIONED).path)))
    catalog.create_recipient("guard")
    catalog.grant("guarded", "guard")
    before = catalog.contents()
    for path, fields in POSTS:
        for token in (None, "forged"):
            data = fields if token is None else {**fields, "csrf": token}
            answer = console.post(path, data=data)
            assert answer.status_code == 403, path
            assert "Refused" in answer.text
    after = catalog.contents()
    assert after.generation == before.generation  # nothing changed


def test_console_changes_are_audited_as_the_admin_tokens(
    server: CatalogAdminServer, console: httpx.Client
) -> None:
    assert post(console, "/console/shares", name="audited").status_code == 303
    assert post(console, "/console/shares", name="audited").status_code == 400  # a duplicate

    def audited() -> list[dict[str, Any]]:
        with server.running.api() as api:
            records = api.get("/api/audit", params={"operation": "createShare"}).json()["records"]
        mine = [r for r in records if r.get("share") == "audited"]
        return mine if len(mine) == 2 else []

    mine = wait_until(audited, 30, "both audit records", 0.2)
    assert sorted(r["status"] for r in mine) == [200, 409]
    assert {r["admin"] for r in mine} == {"token-1"}
    assert {r.get("errorCode") for r in mine} == {None, "RESOURCE_ALREADY_EXISTS"}


def test_a_console_change_takes_effect_on_the_sharing_listener_at_once(
    server: CatalogAdminServer, console: httpx.Client
) -> None:
    server.catalog.create_share("instant")
    token = shown_profile(post(console, "/console/recipients", name="instant-reader"))[
        "bearerToken"
    ]

    def shares() -> tuple[int, list[str]]:
        answer = httpx.get(
            server.running.sharing.url + "/shares", headers={"Authorization": f"Bearer {token}"}
        )
        return answer.status_code, [s["name"] for s in answer.json().get("items", [])]

    assert shares() == (200, [])
    assert (
        post(console, "/console/recipients/instant-reader/grants", share="instant").status_code
        == 303
    )
    # no waiting for the listener's poll: the console reloaded its catalog
    assert shares() == (200, ["instant"])
    assert post(console, "/console/recipients/instant-reader/revoke").status_code == 303
    assert shares()[0] == 401
