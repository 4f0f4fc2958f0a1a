"""Profiles: version 1 bearer tokens (expiry warned about and enforced) and version 2
OAuth client credentials against a token endpoint run on 127.0.0.1."""

from __future__ import annotations

import base64
import datetime as dt
import json
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import parse_qsl

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from client_support import TOKEN, write_profile
from deltaport.client import ProfileExpiredError, RetryPolicy, SharingClient, SharingError
from emulators import serve_asgi

FAST_RETRY = RetryPolicy(max_attempts=4, base_delay=0.01, max_delay=0.05, total_time=20)


@dataclass
class TokenEndpoint:
    base: str = ""
    lifetime: int = 3600
    grants: list[dict[str, str]] = field(default_factory=list)
    accept_secret: str = "s3cret"
    tokens: list[str] = field(default_factory=list)
    """Tokens to hand out first (then the server's real token)."""
    failures: list[int] = field(default_factory=list)
    """Statuses to answer first, before any token."""

    @property
    def url(self) -> str:
        return self.base + "/oauth/token"


@pytest.fixture
def token_endpoint() -> Iterator[TokenEndpoint]:
    state = TokenEndpoint()

    async def issue(request: Request) -> JSONResponse:
        form = dict(parse_qsl((await request.body()).decode()))
        scheme, _, encoded = request.headers.get("authorization", "").partition(" ")
        client_id, _, secret = base64.b64decode(encoded).decode().partition(":")
        state.grants.append({**form, "client_id": client_id})
        if state.failures:
            return JSONResponse({"error": "temporarily_unavailable"}, state.failures.pop(0))
        if scheme != "Basic" or secret != state.accept_secret:
            return JSONResponse({"error": "invalid_client"}, 401)
        token = state.tokens.pop(0) if state.tokens else TOKEN
        body = {"access_token": token, "token_type": "Bearer", "expires_in": state.lifetime}
        return JSONResponse(body)

    app = Starlette(routes=[Route("/oauth/token", issue, methods=["POST"])])
    with serve_asgi(app) as base:
        state.base = base
        yield state


def oauth_profile(tmp_path, server, endpoint, secret="s3cret", scope=None):
    profile = {
        "shareCredentialsVersion": 2,
        "type": "oauth_client_credentials",
        "endpoint": server.url,
        "tokenEndpoint": endpoint.url,
        "clientId": "recipient-1",
        "clientSecret": secret,
    }
    if scope:
        profile["scope"] = scope
    path = tmp_path / "oauth.share"
    path.write_text(json.dumps(profile))
    return path


def test_oauth_token_is_fetched_once_and_reused(tmp_path, sharing_server, token_endpoint):
    path = oauth_profile(tmp_path, sharing_server, token_endpoint, scope="sharing")
    with SharingClient(path) as client:
        assert [s.name for s in client.list_shares()] == ["share1", "share2"]
        assert client.table("share1.default.parted").version() == 2
    assert token_endpoint.grants == [
        {"grant_type": "client_credentials", "scope": "sharing", "client_id": "recipient-1"}
    ]


def test_oauth_token_is_renewed_before_it_expires(tmp_path, sharing_server, token_endpoint):
    token_endpoint.lifetime = 2  # renewed at half its lifetime
    path = oauth_profile(tmp_path, sharing_server, token_endpoint)
    with SharingClient(path) as client:
        client.list_shares()
        client.list_shares()
        assert len(token_endpoint.grants) == 1
        time.sleep(1.2)
        client.list_shares()
    assert len(token_endpoint.grants) == 2


def test_oauth_token_endpoint_failures_are_retried(tmp_path, sharing_server, token_endpoint):
    token_endpoint.failures = [503, 429, 502]
    path = oauth_profile(tmp_path, sharing_server, token_endpoint)
    with SharingClient(path, retry=FAST_RETRY) as client:
        assert [s.name for s in client.list_shares()] == ["share1", "share2"]
    assert len(token_endpoint.grants) == 4 and token_endpoint.failures == []


def test_oauth_token_endpoint_down_is_a_clear_error(tmp_path, sharing_server, token_endpoint):
    token_endpoint.failures = [503] * 10
    path = oauth_profile(tmp_path, sharing_server, token_endpoint)
    with SharingClient(path, retry=FAST_RETRY) as client, pytest.raises(SharingError) as info:
        client.list_shares()
    assert info.value.status == 503
    assert info.value.message.startswith("the OAuth token request failed after 4 attempts")
    assert len(token_endpoint.grants) == 4


def test_oauth_refusal_is_a_clear_error(tmp_path, sharing_server, token_endpoint):
    path = oauth_profile(tmp_path, sharing_server, token_endpoint, secret="wrong")
    with SharingClient(path) as client, pytest.raises(SharingError) as info:
        client.list_shares()
    assert info.value.status == 401
    assert "refused the client credentials" in info.value.message


def test_bearer_profile_v2(tmp_path, sharing_server):
    path = write_profile(
        tmp_path / "v2.share", sharing_server.url, shareCredentialsVersion=2, type="bearer_token"
    )
    with SharingClient(path) as client:
        assert len(client.list_shares()) == 2


def test_expired_bearer_token_is_refused(tmp_path, sharing_server):
    past = (dt.datetime.now(dt.UTC) - dt.timedelta(minutes=1)).isoformat()
    path = write_profile(tmp_path / "old.share", sharing_server.url, expirationTime=past)
    with pytest.raises(ProfileExpiredError, match="expired"):
        SharingClient(path)


def test_bearer_token_expiring_soon_is_warned_about(tmp_path, sharing_server):
    soon = (dt.datetime.now(dt.UTC) + dt.timedelta(hours=2)).isoformat()
    path = write_profile(tmp_path / "soon.share", sharing_server.url, expirationTime=soon)
    with pytest.warns(UserWarning, match="expires at"):
        client = SharingClient(path)
    with client:
        assert len(client.list_shares()) == 2
    later = (dt.datetime.now(dt.UTC) + dt.timedelta(days=30)).isoformat()
    path = write_profile(tmp_path / "later.share", sharing_server.url, expirationTime=later)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        SharingClient(path).close()


def test_wrong_bearer_token_is_unauthenticated(tmp_path, sharing_server):
    path = write_profile(tmp_path / "bad.share", sharing_server.url, bearerToken="nope")
    with SharingClient(path) as client, pytest.raises(SharingError) as info:
        client.list_shares()
    assert info.value.status == 401


def test_token_refused_by_the_server_is_fetched_again(tmp_path, sharing_server, token_endpoint):
    token_endpoint.tokens = ["revoked-token"]
    path = oauth_profile(tmp_path, sharing_server, token_endpoint)
    with SharingClient(path) as client:
        assert len(client.list_shares()) == 2
    assert len(token_endpoint.grants) == 2
