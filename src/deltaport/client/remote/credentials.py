"""Temporary table credentials for directory mode: asking the server for them, turning
them into what obstore takes, and renewing them before they expire.

The protocol's answer names the directory and carries keys (S3), a SAS token (Azure) or
a bearer token (GCS) with ``expirationTime``. The protocol gives no endpoint or region;
deltaport's server adds them for S3 (``endpoint`` only for S3-compatible stores), and the
recipient's own storage options (``aws_endpoint``, ``aws_region``, ...) override them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec

from deltaport.client.base.errors import ResponseError
from deltaport.client.base.models import Table
from deltaport.client.remote.rest import RestClient, table_path
from deltaport.protocol.credentials import TemporaryCredentials, TemporaryCredentialsResponse

DEFAULT_RENEW_MARGIN = timedelta(minutes=2)
"""Credentials with less life left than this are asked for again before a storage call
(a read of one object then never starts with a credential about to lapse)."""

Clock = Callable[[], datetime]
_decoder = msgspec.json.Decoder(TemporaryCredentialsResponse)


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class VendedCredentials:
    """One credential of one directory (picklable: Spark ships it to tasks)."""

    location: str
    cloud: str
    """``aws``, ``azure`` or ``gcp``."""
    secret: tuple[str, ...]
    """(key id, secret key, session token), (SAS token,) or (bearer token,)."""
    expires_at: datetime
    endpoint: str | None = None
    """The S3-compatible endpoint the server told (deltaport's servers say it)."""
    region: str | None = None

    @classmethod
    def from_protocol(cls, credentials: TemporaryCredentials) -> VendedCredentials:
        expires = datetime.fromtimestamp(credentials.expirationTime / 1000, UTC)
        location = credentials.location
        if (aws := credentials.awsTempCredentials) is not None:
            keys = (aws.accessKeyId, aws.secretAccessKey, aws.sessionToken)
            return cls(location, "aws", keys, expires, credentials.endpoint, credentials.region)
        if (azure := credentials.azureUserDelegationSas) is not None:
            return cls(location, "azure", (azure.sasToken.lstrip("?"),), expires)
        if (gcp := credentials.gcpOauthToken) is not None:
            return cls(location, "gcp", (gcp.oauthToken,), expires)
        raise ResponseError("the temporary credentials answer carries no credential")

    def store_options(self) -> dict[str, str]:
        """obstore options for what the server told besides the credential."""
        options: dict[str, str] = {}
        if self.endpoint:
            options["aws_endpoint"] = self.endpoint
            if self.endpoint.startswith("http://"):
                options["aws_allow_http"] = "true"
        if self.region:
            options["aws_region"] = self.region
        return options

    def provider_answer(self, expires_at: datetime) -> dict[str, Any]:
        """What an obstore ``credential_provider`` returns for this credential."""
        if self.cloud == "aws":
            key_id, secret, token = self.secret
            return {
                "access_key_id": key_id,
                "secret_access_key": secret,
                "token": token,
                "expires_at": expires_at,
            }
        if self.cloud == "azure":
            return {"sas_token": self.secret[0], "expires_at": expires_at}
        return {"token": self.secret[0], "expires_at": expires_at}


def request_credentials(rest: RestClient, table: Table, location: str | None) -> VendedCredentials:
    """``POST .../temporary-table-credentials`` for ``location`` (None: the table root)."""
    body = {"location": location} if location is not None else {}
    content = rest.post_json(table_path(table) + "/temporary-table-credentials", body)
    try:
        answer = _decoder.decode(content)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        raise ResponseError(f"invalid temporary credentials answer: {exc}") from None
    return VendedCredentials.from_protocol(answer.credentials)


class CredentialSource:
    """The credential of one directory, asked for again (by ``renew``) once less than
    ``margin`` of its life is left. Thread-safe: one renewal at a time; ``renewals``
    counts them."""

    def __init__(
        self,
        current: VendedCredentials,
        renew: Callable[[], VendedCredentials],
        *,
        margin: timedelta = DEFAULT_RENEW_MARGIN,
        clock: Clock = utc_now,
    ) -> None:
        self._current = current
        self._renew = renew
        self.margin = margin
        self._clock = clock
        self._lock = threading.Lock()
        self.renewals = 0

    @property
    def location(self) -> str:
        return self._current.location

    def store_options(self) -> dict[str, str]:
        """The endpoint and region the server told with the first credential."""
        return self._current.store_options()

    def current(self) -> VendedCredentials:
        with self._lock:
            if self._current.expires_at - self._clock() < self.margin:
                self._current = self._renew()
                self.renewals += 1
            return self._current

    def provider(self) -> dict[str, Any]:
        """An obstore ``credential_provider`` answer. obstore keeps an answer until its
        ``expires_at``; that is set ``margin`` early, so obstore asks again (and this
        renews) in time."""
        credentials = self.current()
        return credentials.provider_answer(credentials.expires_at - self.margin)
