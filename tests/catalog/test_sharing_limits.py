"""The sharing listener's limits over raw HTTP against a real server on a catalog: a
recipient over its request rate gets 429 ``TOO_MANY_REQUESTS`` with ``Retry-After`` while
the others are answered, and an address that keeps presenting wrong bearer tokens is
refused before its tokens are looked at. The rates are so low that no request is refilled
during a test: every assertion counts requests, none measures time."""

from __future__ import annotations

import base64
import contextlib
import io
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pyarrow as pa
import pytest
from deltalake import write_deltalake

from deltaport.catalog.recipient_access import ACTIVATION_INFO_PATH, ACTIVATION_PATH
from deltaport.cli import main as cli
from sharing_server import RunningServer, start_server, stop_server

BURST = 3
VIP_BURST = 6
FAILED_AUTH_LIMIT = 5
WRONG_TOKEN = "not-a-token-7d1e0b5a9c"


def _catalog(url: str, *args: str) -> None:
    assert cli([*args, "--catalog", url]) == 0


def _token(url: str, tmp: Path, name: str) -> str:
    path = tmp / f"{name}.share"
    _catalog(url, "recipient", "create", name, "-o", str(path), "--endpoint", "http://x")
    _catalog(url, "share", "grant", "s", "--to", name)
    return str(json.loads(path.read_text())["bearerToken"])


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningServer, dict]]:
    tmp = tmp_path_factory.mktemp("sharing-limits")
    url = f"sqlite:///{tmp}/catalog.db"
    _catalog(url, "catalog", "init")
    write_deltalake(str(tmp / "t"), pa.table({"id": [1, 2, 3]}))
    _catalog(url, "share", "create", "s")
    _catalog(url, "table", "add", "s.sc.t", str(tmp / "t"))
    tokens = {
        name: _token(url, tmp, name)
        for name in ("greedy", "calm", "VIP", "bystander", "iceberg", "proxied")
    }
    oauth = tmp / "oauth.share"
    _catalog(
        url, "recipient", "create", "oauth", "--oauth", "-o", str(oauth), "--endpoint", "http://x"
    )
    _catalog(url, "share", "grant", "s", "--to", "oauth")
    tokens["oauth"] = json.loads(oauth.read_text())
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        _catalog(url, "recipient", "create", "linked", "--activation", "--endpoint", "http://x")
    tokens["link"] = printed.getvalue().splitlines()[0].rsplit("/", 1)[1]
    config = {
        "catalog": url,
        "signingKey": "limits-tests-key",
        "trustedProxies": ["127.0.0.1/32"],
        "rateLimits": {
            "requestsPerSecond": 0.01,
            "burst": BURST,
            "recipients": {"vip": {"requestsPerSecond": 0.01, "burst": VIP_BURST}},
            "failedAuthLimit": FAILED_AUTH_LIMIT,
            "failedAuthWindowSeconds": 3600,
        },
    }
    server = start_server(config, tmp / "server")
    yield server, tokens
    stop_server(server)


def _get(server: RunningServer, path: str, token: str, address: str) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}", "X-Forwarded-For": address}
    return httpx.get(server.url + path, headers=headers, timeout=30)


def test_a_greedy_recipient_is_limited_and_the_others_are_not(
    limited: tuple[RunningServer, dict],
) -> None:
    server, tokens = limited
    greedy = [_get(server, "/shares", tokens["greedy"], "192.0.2.1") for _ in range(BURST + 5)]
    assert [r.status_code for r in greedy] == [200] * BURST + [429] * 5
    refused = greedy[-1]
    assert refused.json()["errorCode"] == "TOO_MANY_REQUESTS"
    assert 1 <= int(refused.headers["retry-after"]) <= 100  # one request at 0.01 per second
    table = "/shares/s/schemas/sc/tables/t/version"
    assert _get(server, table, tokens["greedy"], "192.0.2.1").status_code == 429
    # the others keep their own buckets, whatever address they come from
    calm = [_get(server, "/shares", tokens["calm"], "192.0.2.1") for _ in range(BURST)]
    assert [r.status_code for r in calm] == [200] * BURST
    assert _get(server, "/shares", tokens["calm"], "192.0.2.1").status_code == 429
    # an override by recipient name (names compared without case) gives a larger burst
    vip = [_get(server, "/shares", tokens["VIP"], "192.0.2.2") for _ in range(VIP_BURST + 1)]
    assert [r.status_code for r in vip] == [200] * VIP_BURST + [429]


def test_wrong_tokens_from_one_address_are_refused_before_they_are_checked(
    limited: tuple[RunningServer, dict],
) -> None:
    server, tokens = limited
    guesses = [
        _get(server, "/shares", f"{WRONG_TOKEN}{i}", "203.0.113.9")
        for i in range(FAILED_AUTH_LIMIT + 3)
    ]
    statuses = [r.status_code for r in guesses]
    assert statuses == [401] * FAILED_AUTH_LIMIT + [429] * 3
    assert guesses[-1].json()["errorCode"] == "TOO_MANY_REQUESTS"
    assert int(guesses[-1].headers["retry-after"]) >= 3500  # the window is an hour
    # the address is refused even with a valid token; another address is not affected
    assert _get(server, "/shares", tokens["bystander"], "203.0.113.9").status_code == 429
    assert _get(server, "/shares", tokens["bystander"], "198.51.100.7").status_code == 200
    log = server.log()
    # four refusals, one log line: a storm of refused guesses does not flood the log
    assert log.count("sharing authentication refused for 203.0.113.9") == 1
    assert "failed sharing bearer token from 203.0.113.9" in log
    assert WRONG_TOKEN not in log


def test_the_iceberg_catalog_shares_the_limits(limited: tuple[RunningServer, dict]) -> None:
    server, tokens = limited
    config = server.base + "/iceberg/v1/config"

    def get(token: str, address: str) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}", "X-Forwarded-For": address}
        return httpx.get(config, headers=headers, timeout=30)

    # one bucket per recipient across both APIs: a Delta Sharing request and Iceberg ones
    assert _get(server, "/shares", tokens["iceberg"], "192.0.2.3").status_code == 200
    answers = [get(tokens["iceberg"], "192.0.2.3") for _ in range(BURST)]
    assert [a.status_code for a in answers] == [200] * (BURST - 1) + [429]
    assert answers[-1].json()["error"]["type"] == "TooManyRequestsException"
    assert int(answers[-1].headers["retry-after"]) >= 1
    # wrong tokens on the Iceberg routes count against the address as on the others
    guesses = [get(f"{WRONG_TOKEN}-ice{i}", "203.0.113.10") for i in range(FAILED_AUTH_LIMIT)]
    assert [g.status_code for g in guesses] == [401] * FAILED_AUTH_LIMIT
    assert _get(server, "/shares", WRONG_TOKEN, "203.0.113.10").status_code == 429
    assert get(tokens["bystander"], "203.0.113.10").status_code == 429


@pytest.mark.parametrize(
    ("guessed_from", "then_from"),
    [
        ("203.0.113.11:4711", "203.0.113.11"),
        ("[2001:db8::11]:443", "2001:db8::11"),
        ("unknown", "not-an-address"),
    ],
)
def test_a_forwarded_hop_is_counted_by_its_address_never_as_the_proxy(
    limited: tuple[RunningServer, dict], guessed_from: str, then_from: str
) -> None:
    """A port is not part of the address; a hop that is no address is from nowhere, one
    count of its own: neither is the trusted proxy's, which its own requests still pass."""
    server, tokens = limited
    guesses = [
        _get(server, "/shares", f"{WRONG_TOKEN}-hop{i}", guessed_from)
        for i in range(FAILED_AUTH_LIMIT)
    ]
    assert [g.status_code for g in guesses] == [401] * FAILED_AUTH_LIMIT
    assert _get(server, "/shares", tokens["proxied"], then_from).status_code == 429
    from_proxy = httpx.get(
        server.url + "/shares", headers={"Authorization": f"Bearer {tokens['proxied']}"}
    )
    assert from_proxy.status_code == 200, from_proxy.text


def _client_token(
    server: RunningServer, client_id: str, secret: str, address: str
) -> httpx.Response:
    basic = base64.b64encode(f"{client_id}:{secret}".encode()).decode()
    headers = {"Authorization": f"Basic {basic}", "X-Forwarded-For": address}
    body = {"grant_type": "client_credentials"}
    return httpx.post(server.url + "/oauth/token", data=body, headers=headers, timeout=30)


def test_wrong_client_secrets_at_the_token_endpoint_count_in_the_same_limit(
    limited: tuple[RunningServer, dict],
) -> None:
    server, tokens = limited
    oauth = tokens["oauth"]
    client_id, secret = oauth["clientId"], oauth["clientSecret"]
    guesses = [
        _client_token(server, client_id, f"wrong-secret-{i}", "203.0.113.20")
        for i in range(FAILED_AUTH_LIMIT)
    ]
    assert [g.status_code for g in guesses] == [401] * FAILED_AUTH_LIMIT
    assert guesses[0].json()["error"] == "invalid_client"
    refused = _client_token(server, client_id, secret, "203.0.113.20")  # the right secret
    assert refused.status_code == 429
    assert refused.json()["errorCode"] == "TOO_MANY_REQUESTS"
    assert refused.json()["error"] == "temporarily_unavailable"
    assert int(refused.headers["retry-after"]) >= 3500
    # one count per address for every credential the listener takes
    assert _get(server, "/shares", tokens["bystander"], "203.0.113.20").status_code == 429
    elsewhere = _client_token(server, client_id, secret, "198.51.100.20")
    assert elsewhere.status_code == 200, elsewhere.text
    assert "wrong-secret" not in server.log()


def test_links_that_open_nothing_count_in_the_same_limit(
    limited: tuple[RunningServer, dict],
) -> None:
    server, tokens = limited

    def get(path: str, link: str, address: str) -> httpx.Response:
        headers = {"X-Forwarded-For": address}
        return httpx.get(f"{server.base}{path}/{link}", headers=headers, timeout=30)

    guesses = [
        get(ACTIVATION_INFO_PATH if i % 2 else ACTIVATION_PATH, f"guessed-link-{i}", "203.0.113.21")
        for i in range(FAILED_AUTH_LIMIT)
    ]
    assert [g.status_code for g in guesses] == [404] * FAILED_AUTH_LIMIT
    refused = get(ACTIVATION_PATH, tokens["link"], "203.0.113.21")  # the right link
    assert refused.status_code == 429
    assert refused.json()["errorCode"] == "TOO_MANY_REQUESTS"
    assert int(refused.headers["retry-after"]) >= 3500
    assert _get(server, "/shares", tokens["bystander"], "203.0.113.21").status_code == 429
    # the refusal did not use the link up
    profile = get(ACTIVATION_PATH, tokens["link"], "198.51.100.21")
    assert profile.status_code == 200, profile.text
    assert profile.json()["bearerToken"]
