"""OAuth recipients on a real server on a catalog database: ``recipient create --oauth``
writes a ``shareCredentialsVersion`` 2 profile of type ``oauth_client_credentials`` that
the official client 1.4.2 and deltaport's read a corpus table with; the token endpoint
speaks RFC 6749's client-credentials grant; rotation and revocation end the old client;
the IP access list holds on the token endpoint too."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from deltalake import DeltaTable
from starlette.routing import Route

import deltaport
from corpus import corpus_table
from deltaport.cli import main as cli
from deltaport.config.loading import parse_config
from deltaport.server import create_app
from emulators import official_call, official_client_python, official_client_results  # noqa: F401
from sharing_server import RunningServer, start_server, stop_server
from waiting import wait_until

LIVE_SECONDS = 5
CORPUS = "dat__basic_append"
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def _eventually(check: Callable[[], bool]) -> None:
    wait_until(check, LIVE_SECONDS, "the catalog's change to reach the server")


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningServer, str, Path]]:
    tmp = tmp_path_factory.mktemp("oauth")
    url = f"sqlite:///{tmp}/catalog.db"
    assert cli(["catalog", "init", "--catalog", url]) == 0
    assert cli(["share", "create", "s", "--catalog", url]) == 0
    location = str(corpus_table(CORPUS).path)
    assert cli(["table", "add", "s.sc.t", location, "--catalog", url]) == 0
    server = start_server({"catalog": url, "signingKey": "oauth-key"}, tmp / "server")
    yield server, url, tmp
    stop_server(server)


def _recipient(
    server: RunningServer, url: str, tmp: Path, name: str, *args: str
) -> tuple[Path, dict[str, Any]]:
    path = tmp / f"{name}.share"
    created = ["recipient", "create", name, "--oauth", "--endpoint", server.url, *args]
    assert cli([*created, "-o", str(path), "--catalog", url]) == 0
    assert cli(["share", "grant", "s", "--to", name, "--catalog", url]) == 0
    return path, json.loads(path.read_text())


def _basic(client_id: str, secret: str) -> dict[str, str]:
    encoded = base64.b64encode(f"{client_id}:{secret}".encode()).decode()
    return {**FORM, "Authorization": f"Basic {encoded}"}


def _token(profile: dict[str, Any], **form: str) -> httpx.Response:
    body = {"grant_type": "client_credentials", **form}
    headers = _basic(profile["clientId"], profile["clientSecret"])
    return httpx.post(profile["tokenEndpoint"], data=body, headers=headers)


def _sees_share(server: RunningServer, profile: dict[str, Any]) -> bool:
    """Whether the server has seen both the recipient and its grant (two catalog changes)."""
    answer = _token(profile)
    if answer.status_code != 200:
        return False
    with server.client(answer.json()["access_token"]) as client:
        return [s["name"] for s in client.get("/shares").json()["items"]] == ["s"]


def _expected_rows() -> list[Any]:
    frame = DeltaTable(str(corpus_table(CORPUS).path)).to_pandas()
    return sorted(frame.to_dict("records"), key=lambda r: json.dumps(r, default=str))


def test_both_clients_read_with_an_oauth_profile(  # type: ignore[no-untyped-def]
    setup,
    official_client_python: Path,  # noqa: F811
) -> None:
    server, url, tmp = setup
    path, profile = _recipient(server, url, tmp, "reader")
    assert profile["shareCredentialsVersion"] == 2
    assert profile["type"] == "oauth_client_credentials"
    assert profile["endpoint"] == server.url
    assert profile["tokenEndpoint"] == server.url + "/oauth/token"
    assert profile["clientId"].startswith("dpc_")
    assert "bearerToken" not in profile
    _eventually(lambda: _sees_share(server, profile))
    expected = _expected_rows()
    ours = deltaport.load_as_pandas(f"{path}#s.sc.t").to_dict("records")
    assert sorted(ours, key=lambda r: json.dumps(r, default=str)) == expected
    call = official_call("load_as_pandas", f"{path}#s.sc.t")
    (official,) = official_client_results(official_client_python, [call])
    assert "rows" in official, official
    assert sorted(official["rows"], key=lambda r: json.dumps(r, default=str)) == expected


def test_the_token_endpoint_follows_rfc_6749(setup) -> None:  # type: ignore[no-untyped-def]
    server, url, tmp = setup
    _, profile = _recipient(server, url, tmp, "rfc")
    _eventually(lambda: _sees_share(server, profile))
    answer = _token(profile, scope="anything")
    assert answer.headers["cache-control"] == "no-store"
    body = answer.json()
    assert body["token_type"] == "Bearer"
    assert body["expires_in"] == 3600
    assert body["access_token"].startswith("dpa_")
    with server.client(body["access_token"]) as client:
        assert client.get("/shares").json()["items"][0]["name"] == "s"
    # credentials in the body instead of Basic
    in_body = {
        "grant_type": "client_credentials",
        "client_id": profile["clientId"],
        "client_secret": profile["clientSecret"],
    }
    assert httpx.post(profile["tokenEndpoint"], data=in_body, headers=FORM).status_code == 200
    both = httpx.post(
        profile["tokenEndpoint"],
        data=in_body,
        headers=_basic(profile["clientId"], profile["clientSecret"]),
    )
    assert (both.status_code, both.json()["error"]) == (400, "invalid_request")
    wrong = httpx.post(
        profile["tokenEndpoint"],
        data={"grant_type": "client_credentials"},
        headers=_basic(profile["clientId"], "dps_wrong"),
    )
    assert wrong.status_code == 401
    assert wrong.json()["error"] == "invalid_client"
    assert wrong.json()["errorCode"] == "UNAUTHENTICATED"
    assert wrong.headers["www-authenticate"].startswith("Basic")
    assert profile["clientSecret"] not in wrong.text
    password = _token(profile, grant_type="password")
    assert (password.status_code, password.json()["error"]) == (400, "unsupported_grant_type")
    as_json = httpx.post(
        profile["tokenEndpoint"],
        json={"grant_type": "client_credentials"},
        headers={
            "Authorization": _basic(profile["clientId"], profile["clientSecret"])["Authorization"]
        },
    )
    assert (as_json.status_code, as_json.json()["error"]) == (400, "invalid_request")
    twice = httpx.post(
        profile["tokenEndpoint"],
        content="grant_type=client_credentials&grant_type=client_credentials",
        headers=_basic(profile["clientId"], profile["clientSecret"]),
    )
    assert (twice.status_code, twice.json()["error"]) == (400, "invalid_request")
    nobody = httpx.post(
        profile["tokenEndpoint"], data={"grant_type": "client_credentials"}, headers=FORM
    )
    assert nobody.status_code == 401
    # neither the secret nor a forged access token is a bearer token
    with server.client(profile["clientSecret"]) as client:
        assert client.get("/shares").status_code == 401
    forged = body["access_token"].replace(profile["clientId"], "dpc_someone-else")
    with server.client(forged) as client:
        assert client.get("/shares").status_code == 401


def test_rotation_and_revocation_end_the_old_client(setup, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    server, url, tmp = setup
    _, old = _recipient(server, url, tmp, "rotor")
    _eventually(lambda: _token(old).status_code == 200)
    access = _token(old).json()["access_token"]
    path = tmp_path / "rotor2.share"
    assert cli(["recipient", "rotate", "rotor", "--now", "-o", str(path), "--catalog", url]) == 0
    new = json.loads(path.read_text())
    assert new["type"] == "oauth_client_credentials"
    assert new["clientId"] != old["clientId"]
    _eventually(lambda: _token(old).status_code == 401)
    with server.client(access) as client:
        assert client.get("/shares").status_code == 401
    assert _token(new).status_code == 200
    assert cli(["recipient", "revoke", "rotor", "--catalog", url]) == 0
    _eventually(lambda: _token(new).status_code == 401)


def test_the_token_endpoint_keeps_to_the_ip_access_list(setup) -> None:  # type: ignore[no-untyped-def]
    server, url, tmp = setup
    _, profile = _recipient(server, url, tmp, "walled", "--ip", "10.0.0.0/8")
    _eventually(lambda: _token(profile).status_code != 401)
    refused = _token(profile)
    assert refused.status_code == 403
    assert refused.json()["errorCode"] == "PERMISSION_DENIED"
    assert "access_token" not in refused.json()


def test_an_oauth_profile_through_an_activation_link(setup, capsys) -> None:  # type: ignore[no-untyped-def]
    server, url, _ = setup
    capsys.readouterr()
    created = ["recipient", "create", "linked", "--oauth", "--activation", "--endpoint", server.url]
    assert cli([*created, "--catalog", url]) == 0
    link = capsys.readouterr().out.splitlines()[0]
    profile = httpx.get(link).json()
    assert profile["type"] == "oauth_client_credentials"
    assert httpx.get(link).status_code == 404
    _eventually(lambda: _token(profile).status_code == 200)


def test_the_catalog_shows_oauth_recipients(setup, capsys) -> None:  # type: ignore[no-untyped-def]
    server, url, tmp = setup
    _recipient(server, url, tmp, "listed", "--ip", "192.0.2.0/24")
    assert "(the client does not expire)" in capsys.readouterr().out
    assert cli(["recipient", "list", "--catalog", url]) == 0
    printed = capsys.readouterr().out
    (line,) = [x for x in printed.splitlines() if x.startswith("listed:")]
    assert "1 token, does not expire" in line
    assert "OAuth client credentials" in line
    assert "from 192.0.2.0/24" in line


def test_the_openapi_document_of_a_catalog_server_has_its_routes(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/catalog.db"
    assert cli(["catalog", "init", "--catalog", url]) == 0
    endpoint = "/api/v2/sharing"
    app = create_app(parse_config({"catalog": url, "endpoint": endpoint}, {}))
    try:
        document = app.state.openapi
        served = set()
        for route in app.routes:
            assert isinstance(route, Route)
            methods = set(route.methods or ()) - ({"HEAD"} if route.methods != {"HEAD"} else set())
            path = route.path.replace("{file_path:path}", "{file_path}")
            for method in methods:
                served.add((method.lower(), path))
        documented = set()
        for base, doc in ((endpoint, document), ("", app.state.root_openapi)):
            assert doc["servers"] == [{"url": base or "/"}]
            for path, item in doc["paths"].items():
                documented |= {(method, base + path) for method in item}
        assert served == documented
        assert ("post", endpoint + "/oauth/token") in served
    finally:
        app.state.catalog.live.close()
