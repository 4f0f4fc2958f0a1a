"""The audit log of a real server (SQLite and PostgreSQL catalogs): a scripted scenario of
recipient reads, admin changes (deltaport's API and the provider API in Unity Catalog's
shape), OAuth tokens and activation links yields exactly its records, in the database and
as JSON lines, none holding a secret; then the filters and paging of ``GET /api/audit`` and
of ``deltaport audit`` (on the database and through ``--server``) answer over them."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa
import pytest
from deltalake import write_deltalake

from admin_support import _await_admin
from deltaport.cli import main
from postgres import postgres_server, postgres_url  # noqa: F401
from sharing_server import RunningServer, free_port, start_server, stop_server
from waiting import wait_until

ADMIN = "audit-admin-token-7c1f0b9e"
SECOND_ADMIN = "audit-second-admin-token-2a94"
SIGNING_KEY = "audit-signing-key-40e8a7"
Q = "deltaSharingQueriedTable"
OAUTH = "generateRecipientOAuthToken"
UNITY = "/api/2.1/unity-catalog/"
POLL_DEADLINE = 30
"""Seconds a new credential may take to reach the sharing listener (it polls every 1 s)."""


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two commits, change data feed on."""
    root = tmp_path_factory.mktemp("audit-lake") / "orders"
    for version in range(2):
        rows = pa.table({"id": pa.array([version * 10 + i for i in range(3)], pa.int64())})
        write_deltalake(
            str(root), rows, mode="append", configuration={"delta.enableChangeDataFeed": "true"}
        )
    return root


@pytest.fixture(params=["sqlite", "postgresql"])
def catalog(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/catalog.db"
    return str(request.getfixturevalue("postgres_url"))


def _start(catalog: str, tmp: Path) -> tuple[RunningServer, str]:
    port = free_port()
    config = {
        "signingKey": SIGNING_KEY,
        "admin": {"port": port, "tokens": [ADMIN, SECOND_ADMIN]},
        # every refusal of the scenario kept whole, as it counts them (test_audit_storms
        # checks the summaries of a storm)
        "audit": {
            "jsonLines": str(tmp / "audit.jsonl"),
            "retentionDays": 30,
            "refusalsRecorded": 1000,
        },
    }
    sharing = start_server(config, tmp / "server", catalog=catalog)
    return sharing, _await_admin(sharing, port).admin


@pytest.fixture
def scenario(catalog: str, lake: Path, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """The scenario played against a server that is then stopped cleanly; yields what the
    records must say, and a second server on the same catalog for the queries."""
    if catalog.startswith("sqlite"):
        main(["catalog", "init", "--catalog", catalog])
    sharing, admin = _start(catalog, tmp_path)
    try:
        played = _play(sharing, admin, lake)
    finally:
        stop_server(sharing)
    again, admin_again = _start(catalog, tmp_path / "again")
    try:
        yield {**played, "catalog": catalog, "admin": admin_again, "tmp": tmp_path}
    finally:
        stop_server(again)


def _play(sharing: RunningServer, admin: str, lake: Path) -> dict[str, Any]:
    api = httpx.Client(base_url=admin, headers={"Authorization": f"Bearer {ADMIN}"})
    second = httpx.Client(base_url=admin, headers={"Authorization": f"Bearer {SECOND_ADMIN}"})
    assert api.post("/api/shares", json={"name": "sales"}).status_code == 201
    table = {"name": "sales.eu.orders", "location": str(lake), "historyShared": True}
    assert api.post("/api/tables", json=table).status_code == 201
    created = api.post("/api/recipients", json={"name": "acme"})
    assert created.status_code == 201
    token = created.json()["profile"]["bearerToken"]
    assert second.post("/api/shares/sales/grants", json={"recipient": "acme"}).status_code == 204
    wrong = httpx.post(
        admin + "/api/shares", json={"name": "x"}, headers={"Authorization": "Bearer nope"}
    )
    assert wrong.status_code == 401

    reader = sharing.client(token)
    reader.headers["User-Agent"] = "audit-test/1"
    # the sharing listener sees the new recipient within its poll interval: each refusal
    # until then is a record too
    first, refused = _refused_until_accepted(
        lambda: reader.get("/shares"), "the sharing listener to accept acme's token"
    )
    assert first.status_code == 200
    path = "/shares/sales/schemas/eu/tables/orders"
    for get in (
        "/shares/sales",
        "/shares/sales/schemas",
        "/shares/sales/schemas/eu/tables",
        "/shares/sales/all-tables",
    ):
        assert reader.get(get).status_code == 200
    assert reader.get(path + "/version").headers["delta-table-version"] == "1"
    assert reader.get(path + "/metadata").status_code == 200
    query = reader.post(path + "/query", json={})
    files = sum('"file"' in line[:8] for line in query.text.splitlines())
    assert files == 2
    changes = reader.get(path + "/changes", params={"startingVersion": 0, "endingVersion": 1})
    assert changes.status_code == 200
    change_files = sum(
        line.startswith(('{"add"', '{"cdf"', '{"remove"')) for line in changes.text.splitlines()
    )
    assert change_files == 2  # one file a commit
    assert reader.get("/shares/nope").status_code == 404
    assert sharing.client("not-a-token").get("/shares").status_code == 401
    rotated = api.post("/api/recipients/acme/rotate", json={"graceSeconds": 0})
    assert rotated.status_code == 200
    secrets = [token, rotated.json()["profile"]["bearerToken"], ADMIN, SECOND_ADMIN, SIGNING_KEY]
    secrets += _play_unity(api, admin, lake)
    oauth_refused, oauth_secrets = _play_oauth(api, sharing)
    secrets += oauth_secrets + _play_activation(api)
    return {
        "secrets": secrets,
        "refused": refused,
        "oauth_refused": oauth_refused,
        "query_bytes": len(query.content),
        "changes_bytes": len(changes.content),
        "change_files": change_files,
    }


def _play_unity(api: httpx.Client, admin: str, lake: Path) -> list[str]:
    """The provider API in Unity Catalog's shape; returns the tokens it made."""
    shares, recipients = UNITY + "shares", UNITY + "recipients"
    assert api.post(shares, json={"name": "marketing"}).status_code == 200
    assert api.get(shares).status_code == 200
    add = {"action": "ADD", "data_object": {"name": str(lake), "shared_as": "web.visits"}}
    assert api.patch(shares + "/marketing", json={"updates": [add]}).status_code == 200
    assert api.get(shares + "/marketing").status_code == 200
    created = api.post(recipients, json={"name": "globex", "authentication_type": "TOKEN"})
    assert created.status_code == 200
    grant = {"changes": [{"principal": "globex", "add": ["SELECT"]}]}
    assert api.patch(shares + "/marketing/permissions", json=grant).status_code == 200
    assert api.get(shares + "/marketing/permissions").status_code == 200
    assert api.get(recipients + "/globex").status_code == 200
    assert api.get(recipients).status_code == 200
    assert api.patch(recipients + "/globex", json={"comment": "a partner"}).status_code == 200
    grace = {"existing_token_expire_in_seconds": 0}
    rotated = api.post(recipients + "/globex/rotate-token", json=grace)
    assert rotated.status_code == 200
    assert api.get(recipients + "/globex/share-permissions").status_code == 200
    assert api.get(shares + "/nope").status_code == 404
    wrong = httpx.post(admin + shares, json={"name": "y"}, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    assert api.delete(recipients + "/globex").status_code == 200
    assert api.delete(shares + "/marketing").status_code == 200
    # the Unity API hands credentials over by activation link: the link's token is the secret
    links = [created.json()["activation_url"], rotated.json()["activation_url"]]
    return [link.rstrip("/").rsplit("/", 1)[1] for link in links]


def _refused_until_accepted(
    ask: Callable[[], httpx.Response], what: str
) -> tuple[httpx.Response, int]:
    """The first answer to ``ask`` that is not a 401, and how many 401s came before it (each
    one a record too): the sharing listener sees a new credential within its poll interval."""
    refusals: list[httpx.Response] = []

    def answered() -> httpx.Response | None:
        answer = ask()
        if answer.status_code != 401:
            return answer
        refusals.append(answer)
        return None

    return wait_until(answered, POLL_DEADLINE, what, 0.2), len(refusals)


def _play_oauth(api: httpx.Client, sharing: RunningServer) -> tuple[int, list[str]]:
    """An OAuth recipient asks for tokens, with a wrong secret first; returns how many
    right asks were refused (until the sharing listener sees the new client) and the
    secrets."""
    kind = {"authenticationType": "OAUTH_CLIENT_CREDENTIALS"}
    created = api.post("/api/recipients", json={"name": "robot", **kind})
    assert created.status_code == 201
    profile = created.json()["profile"]

    def ask(secret: str) -> httpx.Response:
        return httpx.post(
            profile["tokenEndpoint"],
            data={"grant_type": "client_credentials"},
            auth=(profile["clientId"], secret),
            headers={"User-Agent": "audit-test/1"},
        )

    assert ask("dps_wrong").status_code == 401
    issued, refused = _refused_until_accepted(
        lambda: ask(profile["clientSecret"]), "the token endpoint to accept robot's client secret"
    )
    assert issued.status_code == 200
    assert sharing.client(issued.json()["access_token"]).get("/shares").status_code == 200
    return refused, [profile["clientSecret"], issued.json()["access_token"]]


def _play_activation(api: httpx.Client) -> list[str]:
    """An activation link looked at, downloaded, and downloaded again, and one opened from
    outside its recipient's IP access list; returns their secrets."""
    created = api.post("/api/recipients", json={"name": "linked", "activation": True})
    assert created.status_code == 201
    link = created.json()["activation"]
    info = link["url"].replace("/data_sharing_activation/", "/data_sharing_activation_info/")
    agent = {"User-Agent": "audit-test/1"}
    assert httpx.get(info, headers=agent).status_code == 200
    profile = httpx.get(link["url"], headers=agent)
    assert profile.status_code == 200
    assert httpx.get(link["url"], headers=agent).status_code == 404
    fenced = {"name": "fenced", "activation": True, "ipAccessList": ["192.0.2.0/24"]}
    outside = api.post("/api/recipients", json=fenced).json()["activation"]
    assert httpx.get(outside["url"], headers=agent).status_code == 403
    return [link["token"], profile.json()["bearerToken"], outside["token"]]


def _expected_unity() -> list[dict[str, Any]]:
    admin = {"admin": "token-1"}
    marketing = {"share": "marketing", **admin}
    globex = {"target": "globex", **admin}
    return [
        {"operation": "createShare", "status": 200, **marketing},
        {"operation": "listShares", "status": 200, **admin},
        {"operation": "updateShare", "status": 200, "table": "marketing.web.visits", **marketing},
        {"operation": "getShare", "status": 200, **marketing},
        {"operation": "createRecipient", "status": 200, **globex},
        {"operation": "updatePermissions", "status": 200, "target": "globex", **marketing},
        {"operation": "getSharePermissions", "status": 200, **marketing},
        {"operation": "getRecipient", "status": 200, **globex},
        {"operation": "listRecipients", "status": 200, **admin},
        {"operation": "updateRecipient", "status": 200, **globex},
        {"operation": "rotateRecipientToken", "status": 200, **globex},
        {"operation": "getRecipientSharePermissions", "status": 200, **globex},
        {
            "operation": "getShare",
            "status": 404,
            "errorCode": "RESOURCE_DOES_NOT_EXIST",
            "share": "nope",
            **admin,
        },
        {"operation": "createShare", "status": 401, "errorCode": "UNAUTHENTICATED", "share": "y"},
        {"operation": "deleteRecipient", "status": 200, **globex},
        {"operation": "deleteShare", "status": 200, **marketing},
    ]


def _expected_recipient_access(played: dict[str, Any]) -> list[dict[str, Any]]:
    agent = {"userAgent": "audit-test/1"}
    refused = {"status": 401, "errorCode": "UNAUTHENTICATED", **agent}
    return [
        {"operation": "createRecipient", "status": 201, "admin": "token-1", "target": "robot"},
        *[{"operation": OAUTH, **refused}] * (1 + played["oauth_refused"]),
        {"operation": OAUTH, "status": 200, "recipient": "robot", **agent},
        {"operation": "deltaSharingListShares", "status": 200, "recipient": "robot"},
        {"operation": "createRecipient", "status": 201, "admin": "token-1", "target": "linked"},
        {"operation": "getActivationUrlInfo", "status": 200, "recipient": "linked", **agent},
        {"operation": "retrieveRecipientToken", "status": 200, "recipient": "linked", **agent},
        {
            "operation": "retrieveRecipientToken",
            "status": 404,
            "errorCode": "RESOURCE_DOES_NOT_EXIST",
            **agent,
        },
        {"operation": "createRecipient", "status": 201, "admin": "token-1", "target": "fenced"},
        {
            "operation": "retrieveRecipientToken",
            "status": 403,
            "errorCode": "PERMISSION_DENIED",
            "recipient": "fenced",
            **agent,
        },
    ]


def _expected(played: dict[str, Any]) -> list[dict[str, Any]]:
    table = {"share": "sales", "table": "sales.eu.orders"}
    acme = {"recipient": "acme", "userAgent": "audit-test/1"}
    return [
        {"operation": "createShare", "status": 201, "admin": "token-1", "share": "sales"},
        {"operation": "updateShare", "status": 201, "admin": "token-1", **table},
        {"operation": "createRecipient", "status": 201, "admin": "token-1", "target": "acme"},
        {
            "operation": "updatePermissions",
            "status": 204,
            "admin": "token-2",
            "share": "sales",
            "target": "acme",
        },
        {"operation": "createShare", "status": 401, "errorCode": "UNAUTHENTICATED", "share": "x"},
        *[{"operation": "deltaSharingListShares", "status": 401, "userAgent": "audit-test/1"}]
        * played["refused"],
        {"operation": "deltaSharingListShares", "status": 200, **acme},
        {"operation": "deltaSharingGetShare", "status": 200, "share": "sales", **acme},
        {"operation": "deltaSharingListSchemas", "status": 200, "share": "sales", **acme},
        {"operation": "deltaSharingListTables", "status": 200, "share": "sales", **acme},
        {"operation": "deltaSharingListAllTables", "status": 200, "share": "sales", **acme},
        {"operation": "deltaSharingGetTableVersion", "status": 200, "version": 1, **table, **acme},
        {
            "operation": "deltaSharingGetTableMetadata",
            "status": 200,
            "version": 1,
            "files": 0,
            "bytes": None,
            **table,
            **acme,
        },
        {
            "operation": Q,
            "status": 200,
            "version": 1,
            "files": 2,
            "bytes": played["query_bytes"],
            **table,
            **acme,
        },
        {
            "operation": "deltaSharingQueriedTableChanges",
            "status": 200,
            "version": 0,
            "endVersion": 1,
            "files": played["change_files"],
            "bytes": played["changes_bytes"],
            **table,
            **acme,
        },
        {
            "operation": "deltaSharingGetShare",
            "status": 404,
            "errorCode": "RESOURCE_DOES_NOT_EXIST",
            "share": "nope",
            **acme,
        },
        {"operation": "deltaSharingListShares", "status": 401, "errorCode": "UNAUTHENTICATED"},
        {"operation": "rotateRecipientToken", "status": 200, "admin": "token-1", "target": "acme"},
        *_expected_unity(),
        *_expected_recipient_access(played),
    ]


def _matches(record: dict[str, Any], expected: dict[str, Any]) -> bool:
    return all(
        (record.get(k) is not None if v is None else record.get(k) == v)
        for k, v in expected.items()
    )


def _audit(admin: str, **params: Any) -> httpx.Response:
    return httpx.get(
        admin + "/api/audit", params=params, headers={"Authorization": f"Bearer {ADMIN}"}
    )


def test_a_scenario_yields_exactly_its_records(scenario: dict[str, Any]) -> None:
    lines = (scenario["tmp"] / "audit.jsonl").read_text().splitlines()
    logged = [json.loads(line) for line in lines]
    expected = _expected(scenario)
    assert [r["operation"] for r in logged] == [e["operation"] for e in expected]
    for record, wanted in zip(logged, expected, strict=True):
        assert _matches(record, wanted), (record, wanted)
        assert record["clientAddress"] == "127.0.0.1"
        assert record["durationMs"] >= 0
        unset = {"recipient", "admin"} - {k for k in wanted if k in ("recipient", "admin")}
        assert not unset & set(record), record
    # the database holds the same records, newest first
    stored = _audit(scenario["admin"], limit=1000, until="2999-01-01").json()["records"]
    first_run = [r for r in stored if r["operation"] != "listAuditRecords"]
    assert list(reversed(first_run)) == logged
    for text in (json.dumps(stored), "\n".join(lines), _dump(scenario["catalog"])):
        for secret in scenario["secrets"]:
            assert secret not in text
        assert "://" not in text


def _dump(catalog: str) -> str:
    query = "SELECT * FROM audit_records"
    if catalog.startswith("sqlite"):
        with sqlite3.connect(catalog[len("sqlite:///") :]) as db:
            return repr(db.execute(query).fetchall())
    import psycopg

    with psycopg.connect(catalog) as db:
        return repr(db.execute(query).fetchall())


def test_filters_and_pages(scenario: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    admin = scenario["admin"]
    acme = _audit(admin, recipient="ACME").json()
    assert len(acme["records"]) == 10 and acme["next_page_token"] is None
    assert {r["recipient"] for r in acme["records"]} == {"acme"}
    by_table = _audit(admin, table="Sales.EU.Orders").json()["records"]
    assert [r["operation"] for r in by_table][::-1] == [
        "updateShare",
        "deltaSharingGetTableVersion",
        "deltaSharingGetTableMetadata",
        Q,
        "deltaSharingQueriedTableChanges",
    ]
    failed = _audit(admin, status=401).json()["records"]
    refusals = [e["operation"] for e in _expected(scenario) if e["status"] == 401]
    assert [r["operation"] for r in failed] == refusals[::-1]
    assert [r["operation"] for r in _audit(admin, operation=Q).json()["records"]] == [Q]
    everything = _audit(admin, operation="deltaSharingGetShare").json()["records"]
    middle = everything[0]["time"]
    assert (
        _audit(admin, operation="deltaSharingGetShare", since=middle).json()["records"][0]
        == everything[0]
    )
    assert (
        everything[0]
        not in _audit(admin, operation="deltaSharingGetShare", until=middle).json()["records"]
    )

    # three records a page, newest first, until the pages end
    pages: list[dict[str, Any]] = []
    token = None
    while True:
        params = {"recipient": "acme", "limit": 3, **({"page_token": token} if token else {})}
        page = _audit(admin, **params).json()
        pages += page["records"]
        token = page["next_page_token"]
        if token is None:
            break
    assert pages == acme["records"]

    for bad, field in (
        ({"limit": 0}, None),
        ({"limit": 5000}, "limit"),
        ({"since": "yesterday"}, "since"),
        ({"page_token": "x!"}, "page_token"),
        ({"page_token": "WzkyMjMzNzIwMzY4NTQ3NzU4MDgsICJ4Il0"}, "page_token"),  # 2**63
        ({"status": "ok"}, "status"),
        ({"status": "9223372036854775808"}, "status"),  # 2**63: was a 500
        ({"status": "²⁰⁰"}, "status"),  # digits to str.isdigit, not to int()
        ({"status": "99"}, "status"),
        ({"recipient": "acme\x00"}, "recipient"),  # PostgreSQL refuses NUL in text
        ({"recipient": "a" * 257}, "recipient"),
        ({"table": "t" * 769}, "table"),
        ({"operation": "dropEverything"}, "operation"),
        ({"since": "2026-11-27", "until": "2026-11-26"}, "until"),
    ):
        answer = _audit(admin, **bad)
        if field is None:
            assert answer.status_code == 200
            continue
        assert answer.status_code == 400, bad
        assert answer.json()["errorCode"] == "INVALID_PARAMETER_VALUE"
        assert field in answer.json()["message"]
    assert httpx.get(admin + "/api/audit").status_code == 401

    # the command line, on the database and through the server
    assert main(["audit", "--catalog", scenario["catalog"], "--operation", Q, "--json"]) == 0
    local = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["operation"] for r in local] == [Q]
    remote = [
        "audit",
        "--server",
        admin,
        "--admin-token",
        ADMIN,
        "--recipient",
        "acme",
        "--limit",
        "4",
    ]
    assert main(remote) == 0
    shown = capsys.readouterr().out.splitlines()
    assert len(shown) == 5 and shown[-1].startswith("more: --page-token ")
    assert all("  acme  " in line for line in shown[:4])
