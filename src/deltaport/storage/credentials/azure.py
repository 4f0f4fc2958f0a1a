"""Azure: a SAS scoped to one table directory (``sr=d``), read and list only.

With the account key it is a service SAS; without it, a user-delegation SAS signed with a
key the server obtains as a service principal or managed identity
(:mod:`deltaport.storage.credentials.azure_identity`). Directory SAS needs an account with a
hierarchical namespace (ADLS Gen2). It is never widened to the container: a table at the
root of a container cannot be offered in ``dir`` mode.
"""

from __future__ import annotations

import base64
import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import quote

from deltaport.protocol.credentials import AzureUserDelegationSas
from deltaport.storage.azure_sas import blob_account, configured_endpoint
from deltaport.storage.credentials.azure_identity import DelegationKey, delegation_key
from deltaport.storage.credentials.settings import (
    CredentialError,
    CredentialSettings,
    StorageHints,
    Vended,
)
from deltaport.storage.uri import Location

SAS_VERSION = "2022-11-02"
PERMISSIONS = "rl"


@dataclass(frozen=True)
class DirectorySas:
    """A SAS token (query without ``?``) and the string its signature covers."""

    token: str
    string_to_sign: str


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def directory_sas(
    account: str,
    container: str,
    directory: str,
    expiry: datetime,
    secret: bytes | DelegationKey,
    https_only: bool = True,
) -> DirectorySas:
    """A read+list SAS for ``directory`` (and everything below it) of ``container``,
    signed with the account key, or with a user-delegation key."""
    directory = directory.strip("/")
    if not directory:
        raise CredentialError("a directory SAS needs a directory below the container root")
    depth = str(len(directory.split("/")))
    se = _utc(expiry)
    spr = "https" if https_only else ""
    resource = f"/blob/{account}/{container}/{directory}"
    fields = [PERMISSIONS, "", se, resource]
    params = [("sv", SAS_VERSION), ("sr", "d"), ("sdd", depth), ("sp", PERMISSIONS), ("se", se)]
    if spr:
        params.append(("spr", spr))
    if isinstance(secret, DelegationKey):
        key = secret.value
        fields += [secret.oid, secret.tid, secret.start, secret.expiry, secret.service]
        fields += [secret.version, "", "", ""]  # saoid, suoid, scid
        params += [
            ("skoid", secret.oid),
            ("sktid", secret.tid),
            ("skt", secret.start),
            ("ske", secret.expiry),
            ("sks", secret.service),
            ("skv", secret.version),
        ]
    else:
        key = secret
        fields += [""]  # si (stored access policy)
    # sip, spr, sv, sr, snapshot, ses, then five response-header overrides
    fields += ["", spr, SAS_VERSION, "d", "", "", "", "", "", "", ""]
    string_to_sign = "\n".join(fields)
    mac = hmac.new(key, string_to_sign.encode(), "sha256").digest()
    params.append(("sig", base64.b64encode(mac).decode()))
    token = "&".join(f"{k}={quote(v, safe='')}" for k, v in params)
    return DirectorySas(token, string_to_sign)


def recipient_endpoint(settings: CredentialSettings, options: Mapping[str, str]) -> StorageHints:
    """The blob endpoint recipients read the container with, when it is not Azure's public
    one for the location's account."""
    endpoint = settings.azure_recipient_endpoint or configured_endpoint(options)
    return StorageHints(endpoint.rstrip("/") if endpoint else None)


class AzureVendor:
    """Signs a directory SAS per call of :meth:`vend`, asking Entra ID for a delegation key
    first when no account key is configured."""

    def __init__(
        self, settings: CredentialSettings, options: Mapping[str, str], account: str | None
    ) -> None:
        found = blob_account(options, account)
        if found is None:
            raise CredentialError("the Azure storage account name is not configured")
        self._account, self._endpoint, self._key = found
        if self._key is None and not (
            settings.azure_managed_identity
            or (
                settings.azure_tenant_id
                and settings.azure_client_id
                and settings.azure_client_secret
            )
        ):
            raise CredentialError(
                "set an account key in the storage options, or azureTenantId, azureClientId "
                "and azureClientSecret, or azureManagedIdentity: true"
            )
        self._settings = settings

    def vend(self, location: Location) -> Vended:
        expiry = datetime.now(UTC).replace(microsecond=0) + timedelta(
            seconds=self._settings.duration_seconds
        )
        secret: bytes | DelegationKey = (
            self._key
            if self._key is not None
            else delegation_key(self._endpoint, self._settings, expiry)
        )
        sas = directory_sas(
            self._account,
            location.bucket,
            location.key,
            expiry,
            secret,
            https_only=self._endpoint.startswith("https:"),
        )
        return Vended(AzureUserDelegationSas(sas.token), expiry)
