"""Delta Sharing profile files and ``profile#share.schema.table`` URLs.

Version 1 holds ``endpoint``, ``bearerToken`` and an optional ``expirationTime``.
Version 2 adds ``type``: ``bearer_token`` (as version 1) or ``oauth_client_credentials``
(``tokenEndpoint``, ``clientId``, ``clientSecret``, optional ``scope``); the client
fetches tokens, this module only reads the file.

Either version may carry deltaport's optional ``accessMode`` (``auto``, ``url`` or ``dir``):
how deltaport's client and Spark connector read when the call does not say. The official
client ignores fields it does not know.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, TypeAlias
from urllib.parse import urlsplit

import msgspec

MAX_SHARE_CREDENTIALS_VERSION = 2
BEARER_TOKEN = "bearer_token"
OAUTH_CLIENT_CREDENTIALS = "oauth_client_credentials"
_TYPES = (BEARER_TOKEN, OAUTH_CLIENT_CREDENTIALS)
PROFILE_ACCESS_MODES = ("auto", "url", "dir")


class ProfileError(ValueError):
    """A profile file or table URL is malformed."""


@dataclass(frozen=True)
class BearerTokenProfile:
    endpoint: str
    """The sharing server's URL, without a trailing slash."""
    bearer_token: str = field(repr=False)
    expiration_time: dt.datetime | None = None
    """When the token expires (timezone-aware); ``None`` if it never does."""
    share_credentials_version: int = 1
    access_mode: str | None = None
    """``auto``, ``url`` or ``dir``: the read mode when the call names none."""

    @property
    def type(self) -> str:
        return BEARER_TOKEN

    def is_expired(self, now: dt.datetime | None = None) -> bool:
        """Whether the token has expired at ``now`` (default: the current time; a naive
        ``now`` is taken as UTC)."""
        if self.expiration_time is None:
            return False
        return _aware(now or dt.datetime.now(dt.UTC)) >= self.expiration_time


@dataclass(frozen=True)
class OAuthClientCredentialsProfile:
    endpoint: str
    """The sharing server's URL, without a trailing slash."""
    token_endpoint: str
    client_id: str
    client_secret: str = field(repr=False)
    scope: str | None = None
    share_credentials_version: int = 2
    access_mode: str | None = None
    """``auto``, ``url`` or ``dir``: the read mode when the call names none."""

    @property
    def type(self) -> str:
        return OAUTH_CLIENT_CREDENTIALS

    def is_expired(self, now: dt.datetime | None = None) -> bool:
        """Client credentials do not expire; the tokens fetched with them do."""
        return False


Profile: TypeAlias = BearerTokenProfile | OAuthClientCredentialsProfile


def load_profile(source: str | os.PathLike[str] | bytes | Mapping[str, Any]) -> Profile:
    """Read a profile from a file path, JSON text (``{...}``) or a decoded object."""
    if isinstance(source, Mapping):
        return parse_profile(source)
    if isinstance(source, bytes) or (isinstance(source, str) and source.lstrip().startswith("{")):
        return parse_profile(_decode(source, "profile JSON"))
    path = Path(source)
    try:
        text = path.read_bytes()
    except OSError as exc:
        raise ProfileError(f"cannot read profile file {str(path)!r}: {exc.strerror}") from None
    return parse_profile(_decode(text, f"profile file {str(path)!r}"))


def _decode(text: str | bytes, what: str) -> Mapping[str, Any]:
    try:
        obj = msgspec.json.decode(text)
    except msgspec.DecodeError as exc:
        raise ProfileError(f"{what} is not valid JSON: {exc}") from None
    except RecursionError:
        raise ProfileError(f"{what} is nested too deeply") from None
    if not isinstance(obj, dict):
        raise ProfileError(f"{what} must be a JSON object")
    return obj


def parse_profile(obj: Mapping[str, Any]) -> Profile:
    """Validate a decoded profile and return its typed form."""
    version = _version(obj)
    endpoint = _endpoint(_required_string(obj, "endpoint"), "endpoint")
    if version == 1:
        profile_type = BEARER_TOKEN
    else:
        default = OAUTH_CLIENT_CREDENTIALS if "tokenEndpoint" in obj else BEARER_TOKEN
        profile_type = obj.get("type", default)
        if profile_type not in _TYPES:
            raise ProfileError(
                f"unsupported profile type {profile_type!r}; supported: {', '.join(_TYPES)}"
            )
    if profile_type == BEARER_TOKEN:
        return BearerTokenProfile(
            endpoint=endpoint,
            bearer_token=_required_string(obj, "bearerToken"),
            expiration_time=_expiration_time(obj.get("expirationTime")),
            share_credentials_version=version,
            access_mode=_access_mode(obj.get("accessMode")),
        )
    scope = obj.get("scope")
    if scope is not None and not isinstance(scope, str):
        raise ProfileError("profile field 'scope' must be a string")
    return OAuthClientCredentialsProfile(
        endpoint=endpoint,
        token_endpoint=_endpoint(_required_string(obj, "tokenEndpoint"), "tokenEndpoint"),
        client_id=_required_string(obj, "clientId"),
        client_secret=_required_string(obj, "clientSecret"),
        scope=scope or None,
        share_credentials_version=version,
        access_mode=_access_mode(obj.get("accessMode")),
    )


def _version(obj: Mapping[str, Any]) -> int:
    if "shareCredentialsVersion" not in obj:
        raise ProfileError("profile is missing 'shareCredentialsVersion'")
    version = obj["shareCredentialsVersion"]
    if isinstance(version, bool) or not isinstance(version, int):
        raise ProfileError(f"'shareCredentialsVersion' must be an integer, found {version!r}")
    if version > MAX_SHARE_CREDENTIALS_VERSION:
        raise ProfileError(
            f"'shareCredentialsVersion' in the profile is {version} which is too new. "
            f"The current release supports version {MAX_SHARE_CREDENTIALS_VERSION} and below. "
            "Please upgrade to a newer release."
        )
    if version < 1:
        raise ProfileError(f"'shareCredentialsVersion' must be 1 or more, found {version}")
    return version


def _required_string(obj: Mapping[str, Any], key: str) -> str:
    if key not in obj:
        raise ProfileError(f"profile is missing {key!r}")
    value = obj[key]
    if not isinstance(value, str) or not value.strip():
        raise ProfileError(f"profile field {key!r} must be a non-empty string")
    return value


def _endpoint(url: str, key: str) -> str:
    return http_url(url, f"profile field {key!r}")


def http_url(url: str, what: str) -> str:
    """``url`` without its trailing slash, when it is an http(s) URL with a host and, if it
    names one, a TCP port (1-65535); else :class:`ProfileError` saying so of ``what``."""
    url = url.strip()
    try:
        parts = urlsplit(url)
        usable = parts.scheme in ("http", "https") and bool(parts.hostname)
        port = parts.port
    except ValueError:  # a malformed host ("http://[::1"), a port out of range or not a number
        raise ProfileError(
            f"{what} is not an http(s) URL with a valid port (1-65535): {url!r}"
        ) from None
    if not usable:
        raise ProfileError(f"{what} is not an http(s) URL: {url!r}")
    if port == 0:
        raise ProfileError(f"{what} is not an http(s) URL with a valid port (1-65535): {url!r}")
    return url.rstrip("/")


def _expiration_time(value: object) -> dt.datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ProfileError(f"'expirationTime' must be an ISO 8601 string, found {value!r}")
    try:
        return _aware(dt.datetime.fromisoformat(value.strip()))
    except ValueError:
        raise ProfileError(f"'expirationTime' is not an ISO 8601 time: {value!r}") from None


def _access_mode(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or value.lower() not in PROFILE_ACCESS_MODES:
        raise ProfileError(
            f"profile field 'accessMode' must be one of {', '.join(PROFILE_ACCESS_MODES)}, "
            f"found {value!r}"
        )
    return value.lower()


def _aware(moment: dt.datetime) -> dt.datetime:
    return moment.replace(tzinfo=dt.UTC) if moment.tzinfo is None else moment


URL_FORM = (
    "expected PROFILE#share.schema.table (the profile file, '#', then the share, schema and "
    "table names, e.g. config.share#lake.default.orders)"
)


def split_table_url(url: str) -> tuple[str, str, str, str]:
    """Split ``<profile>#<share>.<schema>.<table>`` into its four parts.

    As the official client: the profile path ends at the last ``#``, and the rest must be
    exactly three non-empty names separated by dots.
    """
    hash_at = url.rfind("#")
    profile = url[:hash_at]
    names = url[hash_at + 1 :].split(".")
    if hash_at < 0 or len(names) != 3 or not profile or not all(names):
        raise ProfileError(f"Invalid 'url': {url}: {URL_FORM}")
    share, schema, table = names
    return profile, share, schema, table


# -- the token endpoint an OAuth client-credentials profile names ---------------------------
class TokenRequest(msgspec.Struct):
    """The form of ``POST {endpoint}/oauth/token`` (RFC 6749 4.4); the client's id and
    secret come in the body or, instead, by HTTP Basic. Other fields are ignored."""

    grant_type: Annotated[str, msgspec.Meta(extra_json_schema={"enum": ["client_credentials"]})]
    scope: str | None = None
    client_id: str | None = None
    client_secret: str | None = None


class TokenAnswer(msgspec.Struct):
    """RFC 6749 5.1's answer."""

    access_token: str
    token_type: str
    expires_in: int


class TokenError(msgspec.Struct):
    """RFC 6749 5.2's error, with the sharing API's ``errorCode`` and ``message`` beside it
    so that either kind of client can read it."""

    error: str
    error_description: str
    errorCode: str
    message: str
