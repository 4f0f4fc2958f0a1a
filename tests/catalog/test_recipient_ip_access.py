"""Recipients' IP access lists on a real server on a catalog database: a request from
outside the list gets 403 on every recipient endpoint of the sharing listener (local file
URLs and file batches included, and the Iceberg catalog's routes, in its own error shape);
``X-Forwarded-For`` counts only from ``trustedProxies``."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa
import pytest
from deltalake import write_deltalake

from deltaport.cli import main as cli
from deltaport.iceberg.rest.operations import iceberg_document
from deltaport.server.openapi.document import openapi_document
from sharing_server import RunningServer, start_server, stop_server
from waiting import wait_until

TABLE_ROUTE = "/shares/{share}/schemas/{schema}/tables/{table}"
RECIPIENT_ROUTES = [
    ("GET", "/shares"),
    ("GET", "/shares/{share}"),
    ("GET", "/shares/{share}/schemas"),
    ("GET", "/shares/{share}/schemas/{schema}/tables"),
    ("GET", "/shares/{share}/all-tables"),
    ("GET", TABLE_ROUTE),
    ("HEAD", TABLE_ROUTE),
    ("GET", f"{TABLE_ROUTE}/version"),
    ("GET", f"{TABLE_ROUTE}/metadata"),
    ("POST", f"{TABLE_ROUTE}/query"),
    ("POST", f"{TABLE_ROUTE}/queries/{{queryId}}"),
    ("GET", f"{TABLE_ROUTE}/changes"),
    ("POST", f"{TABLE_ROUTE}/temporary-table-credentials"),
]
"""Every route a recipient's token opens (the file routes are tried with a file URL)."""
ICEBERG_TABLE = "/iceberg/v1/shares/{share}/namespaces/{schema}/tables/{table}"
ICEBERG_ROUTES = [
    ("GET", "/iceberg/v1/config"),
    ("GET", "/iceberg/v1/shares/{share}/namespaces"),
    ("GET", "/iceberg/v1/shares/{share}/namespaces/{schema}"),
    ("HEAD", "/iceberg/v1/shares/{share}/namespaces/{schema}"),
    ("GET", "/iceberg/v1/shares/{share}/namespaces/{schema}/tables"),
    ("GET", ICEBERG_TABLE),
    ("HEAD", ICEBERG_TABLE),
    ("GET", f"{ICEBERG_TABLE}/credentials"),
    ("POST", f"{ICEBERG_TABLE}/metrics"),
]
"""Every route of the Iceberg catalog a recipient's token opens (from the listener's root)."""
NAMES = {"share": "s", "schema": "sc", "table": "t", "queryId": "a-query-id"}
TABLE = TABLE_ROUTE.format(**NAMES)
LIVE_SECONDS = 5


def _catalog(url: str, *args: str) -> str:
    assert cli([*args, "--catalog", url]) == 0
    return ""


def _token(url: str, tmp: Path, name: str, *ips: str) -> str:
    path = tmp / f"{name}.share"
    ip_args = [a for ip in ips for a in ("--ip", ip)]
    _catalog(url, "recipient", "create", name, *ip_args, "-o", str(path), "--endpoint", "http://x")
    _catalog(url, "share", "grant", "s", "--to", name)
    return str(json.loads(path.read_text())["bearerToken"])


def _eventually(check: Callable[[], bool]) -> None:
    wait_until(check, LIVE_SECONDS, "the catalog's change to reach the server")


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    tmp = tmp_path_factory.mktemp("ip-access")
    url = f"sqlite:///{tmp}/catalog.db"
    _catalog(url, "catalog", "init")
    table = tmp / "t"
    write_deltalake(
        str(table),
        pa.table({"id": [1, 2, 3]}),
        configuration={"delta.enableChangeDataFeed": "true"},
    )
    _catalog(url, "share", "create", "s")
    _catalog(url, "table", "add", "s.sc.t", str(table), "--history")
    return url, tmp


def _start(url: str, tmp: Path, **extra: Any) -> RunningServer:
    return start_server({"catalog": url, "signingKey": "ip-tests-key", **extra}, tmp)


@pytest.fixture(scope="module")
def direct(catalog: tuple[str, Path]) -> Iterator[tuple[RunningServer, dict[str, str]]]:
    url, tmp = catalog
    tokens = {
        "anywhere": _token(url, tmp, "anywhere"),
        "loopback": _token(url, tmp, "loopback", "127.0.0.0/8", "::1"),
        "elsewhere": _token(url, tmp, "elsewhere", "10.0.0.0/8", "2001:db8::/32"),
        "forwarded": _token(url, tmp, "forwarded", "203.0.113.7"),
    }
    server = _start(url, tmp / "direct")
    yield server, tokens
    stop_server(server)


def _call(client: httpx.Client, method: str, route: str) -> httpx.Response:
    path = route.format(**NAMES)
    if path.endswith("/changes"):
        return client.get(path, params={"startingVersion": 0})
    return client.request(method, path, json={} if method == "POST" else None)


def test_the_routes_tried_are_every_recipient_route() -> None:
    """Every route a bearer token opens (the public ones, such as the document, the probes
    and the file routes, name a security of their own)."""
    documented = {
        (method.upper(), base + path)
        for base, document in (("", openapi_document("")), ("/iceberg", iceberg_document("")))
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if "security" not in operation
    }
    assert documented == set(RECIPIENT_ROUTES) | set(ICEBERG_ROUTES)


def test_a_recipient_outside_its_list_is_refused_everywhere(direct) -> None:  # type: ignore[no-untyped-def]
    server, tokens = direct
    with server.client(tokens["elsewhere"]) as outside:
        for method, path in RECIPIENT_ROUTES:
            answer = _call(outside, method, path)
            assert answer.status_code == 403, (method, path, answer.text)
            if method != "HEAD":
                body = answer.json()
                assert body["errorCode"] == "PERMISSION_DENIED", (method, path)
                assert "10.0.0.0" not in body["message"]
    for name in ("anywhere", "loopback"):
        with server.client(tokens[name]) as inside:
            for method, path in RECIPIENT_ROUTES:
                answer = _call(inside, method, path)
                assert answer.status_code != 403, (name, method, path, answer.text)
            assert inside.get("/shares").json()["items"][0]["name"] == "s"


def test_the_iceberg_catalog_refuses_a_recipient_outside_its_list(direct) -> None:  # type: ignore[no-untyped-def]
    server, tokens = direct

    def call(token: str, method: str, route: str) -> httpx.Response:
        url = server.base + route.format(**NAMES)
        headers = {"Authorization": f"Bearer {token}"}
        body = {"report-type": "scan-report"} if method == "POST" else None
        return httpx.request(method, url, headers=headers, json=body, timeout=30)

    for method, route in ICEBERG_ROUTES:
        answer = call(tokens["elsewhere"], method, route)
        assert answer.status_code == 403, (method, route, answer.text)
        if method != "HEAD":
            error = answer.json()["error"]
            assert error["type"] == "ForbiddenException" and error["code"] == 403, route
            assert "10.0.0.0" not in error["message"]
        inside = call(tokens["loopback"], method, route)
        assert inside.status_code < 400, (method, route, inside.text)


def test_a_bad_token_is_still_401_from_outside(direct) -> None:  # type: ignore[no-untyped-def]
    server, _ = direct
    with server.client("dpt_not-a-token") as stranger:
        assert stranger.get("/shares").status_code == 401


def test_file_urls_follow_the_list_of_their_recipient(direct, catalog) -> None:  # type: ignore[no-untyped-def]
    server, _ = direct
    url, tmp = catalog
    token = _token(url, tmp, "mover", "127.0.0.1")
    with server.client(token) as client:  # the recipient, then its grant, reach the server
        _eventually(lambda: client.get("/shares").json().get("items"))
        lines = [json.loads(line) for line in client.post(f"{TABLE}/query", json={}).text.split()]
        file_url = next(line["file"]["url"] for line in lines if "file" in line)
        assert httpx.get(file_url).status_code == 200
        _catalog(url, "recipient", "set-ip", "mover", "--ip", "192.0.2.0/24")
        _eventually(lambda: httpx.get(file_url).status_code == 403)
        refused = httpx.get(file_url)
        assert refused.json()["errorCode"] == "PERMISSION_DENIED"
        batch = httpx.post(server.url + "/files", json={"files": [file_url]})
        assert batch.status_code == 200
        assert b"PERMISSION_DENIED" in batch.content
        assert client.post(f"{TABLE}/query", json={}).status_code == 403
        _catalog(url, "recipient", "set-ip", "mover")
        _eventually(lambda: httpx.get(file_url).status_code == 200)


def test_forwarded_for_is_not_believed_by_default(direct) -> None:  # type: ignore[no-untyped-def]
    server, tokens = direct
    with server.client(tokens["forwarded"]) as client:
        spoofed = client.get("/shares", headers={"X-Forwarded-For": "203.0.113.7"})
        assert spoofed.status_code == 403, spoofed.text
    with server.client(tokens["loopback"]) as client:
        elsewhere = client.get("/shares", headers={"X-Forwarded-For": "198.51.100.1"})
        assert elsewhere.status_code == 200, elsewhere.text


@pytest.fixture(scope="module")
def proxied(catalog, direct) -> Iterator[tuple[RunningServer, dict[str, str]]]:  # type: ignore[no-untyped-def]
    """A second server on the same catalog that trusts the loopback proxy."""
    _, tokens = direct
    url, tmp = catalog
    server = _start(url, tmp / "proxied", trustedProxies=["127.0.0.0/8", "192.0.2.0/24"])
    yield server, tokens
    stop_server(server)


def test_behind_a_trusted_proxy_the_forwarded_address_counts(proxied) -> None:  # type: ignore[no-untyped-def]
    server, tokens = proxied
    with server.client(tokens["forwarded"]) as client:
        assert client.get("/shares").status_code == 403  # the proxy itself is not the client
        ok = client.get("/shares", headers={"X-Forwarded-For": "203.0.113.7"})
        assert ok.status_code == 200, ok.text
        # another trusted proxy on the way is skipped; the first untrusted hop counts
        chained = client.get("/shares", headers={"X-Forwarded-For": "203.0.113.7, 192.0.2.9"})
        assert chained.status_code == 200, chained.text
        # the client wrote 203.0.113.7 itself; the proxy appended who really connected
        spoofed = client.get("/shares", headers={"X-Forwarded-For": "203.0.113.7, 198.51.100.1"})
        assert spoofed.status_code == 403
        garbage = client.get("/shares", headers={"X-Forwarded-For": "203.0.113.7, nonsense"})
        assert garbage.status_code == 403
    with server.client(tokens["elsewhere"]) as client:
        v6 = client.get("/shares", headers={"X-Forwarded-For": "2001:db8::5"})
        assert v6.status_code == 200, v6.text
        v4 = client.get("/shares", headers={"X-Forwarded-For": "10.9.8.7"})
        assert v4.status_code == 200, v4.text
        assert client.get("/shares", headers={"X-Forwarded-For": "11.0.0.1"}).status_code == 403


def test_a_forwarded_port_is_dropped_and_a_hop_that_is_no_address_refused(proxied) -> None:  # type: ignore[no-untyped-def]
    server, tokens = proxied
    with server.client(tokens["loopback"]) as client:
        # the trusted proxy's own loopback address never stands in for a hop it forwarded
        for hop in ("unknown", "203.0.113.5:4711", "[2001:db8::5]:443", "", "[::1", "1.2.3.4:x"):
            refused = client.get("/shares", headers={"X-Forwarded-For": hop})
            assert refused.status_code == 403, hop
        assert client.get("/shares").status_code == 200  # the proxy itself, no header
    with server.client(tokens["forwarded"]) as client:
        for hop in ("203.0.113.7:4711", "203.0.113.7:4711, 192.0.2.9:80", "[::1]:1, 203.0.113.7"):
            answered = client.get("/shares", headers={"X-Forwarded-For": hop})
            assert answered.status_code == 200, (hop, answered.text)
    with server.client(tokens["elsewhere"]) as client:
        answered = client.get("/shares", headers={"X-Forwarded-For": "[2001:db8::5]:443"})
        assert answered.status_code == 200, answered.text
