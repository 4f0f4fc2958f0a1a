"""Credentials from a profile: a fixed bearer token, or OAuth client-credentials tokens
fetched from the token endpoint (retried as the sharing server's calls are), cached and
renewed before they expire."""

from __future__ import annotations

import datetime as dt
import threading
import time
import warnings
from collections.abc import Callable
from typing import Protocol

import httpx
import msgspec

from deltaport.client.base.errors import ProfileExpiredError, SharingError
from deltaport.client.remote.retry import RetryPolicy, call_with_retries, check_retryable
from deltaport.protocol.profile import (
    BearerTokenProfile,
    OAuthClientCredentialsProfile,
    Profile,
)

EXPIRY_WARNING = dt.timedelta(days=1)
"""A bearer token expiring sooner than this is warned about when a client is created."""

RENEW_MARGIN_SECONDS = 120.0
"""OAuth tokens are renewed this long before they expire (or at half their lifetime when
that is shorter)."""

DEFAULT_OAUTH_LIFETIME_SECONDS = 3600.0


class Credentials(Protocol):
    def authorization(self) -> str:
        """The ``Authorization`` header value for the next request."""
        ...

    def invalidate(self) -> None:
        """Forget a cached token the server refused (401)."""
        ...


class BearerCredentials:
    """A profile's fixed token; refused once past the profile's ``expirationTime``."""

    def __init__(self, profile: BearerTokenProfile) -> None:
        self._profile = profile
        self._check()
        expires = profile.expiration_time
        if expires is not None and expires - dt.datetime.now(dt.UTC) < EXPIRY_WARNING:
            warnings.warn(
                f"the profile's bearer token expires at {expires.isoformat()}; "
                "ask the data provider for a new profile",
                stacklevel=3,
            )

    def _check(self) -> None:
        if self._profile.is_expired():
            expires = self._profile.expiration_time
            raise ProfileExpiredError(
                f"the profile's bearer token expired at {expires.isoformat() if expires else ''}; "
                "ask the data provider for a new profile"
            )

    def authorization(self) -> str:
        self._check()
        return f"Bearer {self._profile.bearer_token}"

    def invalidate(self) -> None:
        """A fixed token cannot be renewed."""


class _TokenAnswer(msgspec.Struct):
    access_token: str
    token_type: str = "Bearer"
    expires_in: int | float | str | None = None


class OAuthCredentials:
    """Tokens from ``tokenEndpoint`` (client-credentials grant, HTTP basic client auth)."""

    def __init__(
        self,
        profile: OAuthClientCredentialsProfile,
        http: httpx.Client,
        retry: RetryPolicy,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._profile = profile
        self._http = http
        self._retry = retry
        self._clock = clock
        self._lock = threading.Lock()
        self._token: str | None = None
        self._renew_at = 0.0

    def authorization(self) -> str:
        with self._lock:
            if self._token is None or self._clock() >= self._renew_at:
                self._fetch()
            return f"Bearer {self._token}"

    def invalidate(self) -> None:
        with self._lock:
            self._token = None

    def _fetch(self) -> None:
        response = call_with_retries(self._request, self._retry, "the OAuth token request")
        if response.status_code != 200:
            error = SharingError.from_response(response)
            raise SharingError(
                f"the OAuth token endpoint refused the client credentials: {error.message}",
                status=error.status,
                error_code=error.error_code,
            )
        try:
            answer = msgspec.json.decode(response.content, type=_TokenAnswer)
            lifetime = float(answer.expires_in or DEFAULT_OAUTH_LIFETIME_SECONDS)
        except (msgspec.DecodeError, ValueError) as exc:
            raise SharingError(f"the OAuth token endpoint answered badly: {exc}") from exc
        now = self._clock()
        self._token = answer.access_token
        self._renew_at = now + lifetime - min(RENEW_MARGIN_SECONDS, lifetime / 2)

    def _request(self) -> httpx.Response:
        form = {"grant_type": "client_credentials"}
        if self._profile.scope:
            form["scope"] = self._profile.scope
        response = self._http.post(
            self._profile.token_endpoint,
            data=form,
            auth=(self._profile.client_id, self._profile.client_secret),
            headers={"Accept": "application/json"},
        )
        return check_retryable(response)


def credentials_for(profile: Profile, http: httpx.Client, retry: RetryPolicy) -> Credentials:
    if isinstance(profile, OAuthClientCredentialsProfile):
        return OAuthCredentials(profile, http, retry)
    return BearerCredentials(profile)
