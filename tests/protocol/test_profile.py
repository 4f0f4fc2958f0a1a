from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest

from deltaport.protocol.profile import (
    BearerTokenProfile,
    OAuthClientCredentialsProfile,
    ProfileError,
    load_profile,
    parse_profile,
    split_table_url,
)

V1 = {
    "shareCredentialsVersion": 1,
    "endpoint": "https://sharing.example.com/delta-sharing/",
    "bearerToken": "tok",
    "expirationTime": "2021-11-12T00:12:29.0Z",
}
V2_OAUTH = {
    "shareCredentialsVersion": 2,
    "type": "oauth_client_credentials",
    "endpoint": "https://sharing.example.com/api/2.0/delta-sharing/metastores/m",
    "tokenEndpoint": "https://login.example.com/oauth2/v2.0/token",
    "clientId": "cid",
    "clientSecret": "secret",
    "scope": "cid/.default",
}


def test_version_1_from_file_text_and_dict(tmp_path: Path) -> None:
    path = tmp_path / "config.share"
    path.write_text(json.dumps(V1))
    expected = BearerTokenProfile(
        endpoint="https://sharing.example.com/delta-sharing",
        bearer_token="tok",
        expiration_time=dt.datetime(2021, 11, 12, 0, 12, 29, tzinfo=dt.UTC),
        share_credentials_version=1,
    )
    assert load_profile(path) == expected
    assert load_profile(str(path)) == expected
    assert load_profile(json.dumps(V1)) == expected
    assert load_profile(json.dumps(V1).encode()) == expected
    assert load_profile(V1) == expected
    assert expected.type == "bearer_token"


def test_version_2_bearer_token_without_expiration() -> None:
    profile = parse_profile(
        {
            "shareCredentialsVersion": 2,
            "type": "bearer_token",
            "endpoint": "http://localhost:8080/",
            "bearerToken": "t",
        }
    )
    assert profile == BearerTokenProfile("http://localhost:8080", "t", None, 2)
    assert not profile.is_expired(dt.datetime(2100, 1, 1, tzinfo=dt.UTC))


def test_version_2_oauth_client_credentials() -> None:
    profile = parse_profile(V2_OAUTH)
    assert profile == OAuthClientCredentialsProfile(
        endpoint="https://sharing.example.com/api/2.0/delta-sharing/metastores/m",
        token_endpoint="https://login.example.com/oauth2/v2.0/token",
        client_id="cid",
        client_secret="secret",
        scope="cid/.default",
        share_credentials_version=2,
    )
    assert profile.type == "oauth_client_credentials"
    assert not profile.is_expired()
    no_scope = {k: v for k, v in V2_OAUTH.items() if k != "scope"}
    without_scope = parse_profile(no_scope)
    assert isinstance(without_scope, OAuthClientCredentialsProfile)
    assert without_scope.scope is None


def test_version_2_without_type_is_inferred_from_its_fields() -> None:
    no_type = {k: v for k, v in V2_OAUTH.items() if k != "type"}
    assert isinstance(parse_profile(no_type), OAuthClientCredentialsProfile)
    bearer = {"shareCredentialsVersion": 2, "endpoint": "https://h", "bearerToken": "t"}
    assert isinstance(parse_profile(bearer), BearerTokenProfile)


def test_access_mode_is_optional_in_either_version() -> None:
    assert parse_profile(V1).access_mode is None
    assert parse_profile({**V1, "accessMode": "DIR"}).access_mode == "dir"
    assert parse_profile({**V2_OAUTH, "accessMode": "auto"}).access_mode == "auto"
    with pytest.raises(ProfileError, match="'accessMode' must be one of"):
        parse_profile({**V2_OAUTH, "accessMode": ""})


def test_secrets_are_not_in_repr() -> None:
    assert "tok" not in repr(parse_profile(V1))
    assert "secret" not in repr(parse_profile(V2_OAUTH))


def test_is_expired() -> None:
    profile = parse_profile(V1)
    expiry = dt.datetime(2021, 11, 12, 0, 12, 29, tzinfo=dt.UTC)
    assert profile.is_expired(expiry)
    assert profile.is_expired(expiry + dt.timedelta(seconds=1))
    assert not profile.is_expired(expiry - dt.timedelta(seconds=1))
    assert not profile.is_expired(dt.datetime(2021, 11, 12, 0, 12, 28))  # naive = UTC
    assert profile.is_expired()
    offset = parse_profile({**V1, "expirationTime": "2021-11-12T02:00:00+02:00"})
    assert offset.is_expired(dt.datetime(2021, 11, 12, 0, 0, tzinfo=dt.UTC))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"shareCredentialsVersion": None}, "missing 'shareCredentialsVersion'"),
        ({"shareCredentialsVersion": 3}, "is 3 which is too new"),
        ({"shareCredentialsVersion": 100}, "supports version 2 and below"),
        ({"shareCredentialsVersion": 0}, "must be 1 or more"),
        ({"shareCredentialsVersion": "1"}, "must be an integer"),
        ({"endpoint": None}, "missing 'endpoint'"),
        ({"endpoint": "sharing.example.com"}, "'endpoint' is not an http(s) URL"),
        ({"endpoint": "ftp://h/x"}, "'endpoint' is not an http(s) URL"),
        ({"endpoint": "https://"}, "'endpoint' is not an http(s) URL"),
        ({"bearerToken": None}, "missing 'bearerToken'"),
        ({"bearerToken": ""}, "'bearerToken' must be a non-empty string"),
        ({"expirationTime": "tomorrow"}, "'expirationTime' is not an ISO 8601 time"),
        ({"expirationTime": 5}, "'expirationTime' must be an ISO 8601 string"),
        ({"accessMode": "fast"}, "'accessMode' must be one of auto, url, dir, found 'fast'"),
        ({"accessMode": 1}, "'accessMode' must be one of"),
    ],
)
def test_version_1_validation(change: dict[str, object], message: str) -> None:
    obj = {k: v for k, v in {**V1, **change}.items() if v is not None}
    with pytest.raises(ProfileError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_profile(obj)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"type": "basic"}, "unsupported profile type 'basic'"),
        ({"tokenEndpoint": None}, "missing 'tokenEndpoint'"),
        ({"tokenEndpoint": "login"}, "'tokenEndpoint' is not an http"),
        ({"clientId": None}, "missing 'clientId'"),
        ({"clientSecret": None}, "missing 'clientSecret'"),
        ({"scope": 5}, "'scope' must be a string"),
    ],
)
def test_version_2_validation(change: dict[str, object], message: str) -> None:
    obj = {k: v for k, v in {**V2_OAUTH, **change}.items() if v is not None}
    with pytest.raises(ProfileError, match=message):
        parse_profile(obj)


def test_unreadable_and_malformed_sources(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="cannot read profile file"):
        load_profile(tmp_path / "missing.share")
    bad = tmp_path / "bad.share"
    bad.write_text("{not json")
    with pytest.raises(ProfileError, match="is not valid JSON"):
        load_profile(bad)
    with pytest.raises(ProfileError, match="must be a JSON object"):
        load_profile(b"[1, 2]")
    with pytest.raises(ProfileError, match="nested too deeply"):
        load_profile(
            b'{"shareCredentialsVersion": 1, "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
        )


@pytest.mark.parametrize(
    ("url", "parts"),
    [
        ("profile.share#s.sc.t", ("profile.share", "s", "sc", "t")),
        ("/tmp/a#b/profile.share#s.sc.t", ("/tmp/a#b/profile.share", "s", "sc", "t")),
        (
            "s3://bucket/p.share#share.schema.table",
            ("s3://bucket/p.share", "share", "schema", "table"),
        ),
    ],
)
def test_split_table_url(url: str, parts: tuple[str, str, str, str]) -> None:
    assert split_table_url(url) == parts


@pytest.mark.parametrize(
    "url",
    ["profile.share", "#s.sc.t", "p#s.sc", "p#s.sc.t.x", "p#.sc.t", "p#s..t", "p#s.sc.", "p#"],
)
def test_split_table_url_rejects(url: str) -> None:
    expected = f"Invalid 'url': {url}: expected PROFILE#share.schema.table (the profile file"
    with pytest.raises(ProfileError, match=f"^{re.escape(expected)}"):
        split_table_url(url)
