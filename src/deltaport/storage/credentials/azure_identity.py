"""User-delegation keys for Azure SAS, obtained with an Entra ID token.

The token comes from a service principal (client credentials) or the managed identity of
the machine (the instance metadata service); the key from the blob service's ``Get User
Delegation Key``. Plain HTTP calls: no Azure SDK is needed for two requests.
"""

from __future__ import annotations

import base64
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import httpx

from deltaport.storage.credentials.settings import CredentialError, CredentialSettings

STORAGE_SCOPE = "https://storage.azure.com/.default"
IMDS_TOKEN_URL = "http://169.254.169.254/metadata/identity/oauth2/token"
KEY_VERSION = "2022-11-02"


@dataclass(frozen=True)
class DelegationKey:
    """The fields of a user-delegation key the SAS repeats (``skoid`` ... ``skv``)."""

    oid: str
    tid: str
    start: str
    expiry: str
    service: str
    version: str
    value: bytes


def entra_token(settings: CredentialSettings) -> str:
    """An access token for Azure Storage as the configured principal or managed identity."""
    try:
        if settings.azure_managed_identity:
            params = {"api-version": "2018-02-01", "resource": "https://storage.azure.com/"}
            if settings.azure_client_id:
                params["client_id"] = settings.azure_client_id
            answer = httpx.get(IMDS_TOKEN_URL, params=params, headers={"Metadata": "true"})
        else:
            answer = httpx.post(
                f"https://login.microsoftonline.com/{settings.azure_tenant_id}/oauth2/v2.0/token",
                data={
                    "grant_type": "client_credentials",
                    "client_id": settings.azure_client_id or "",
                    "client_secret": settings.azure_client_secret or "",
                    "scope": STORAGE_SCOPE,
                },
            )
    except httpx.HTTPError as exc:
        raise CredentialError(f"no Entra ID token ({type(exc).__name__})") from None
    if answer.status_code != 200:
        raise CredentialError(f"no Entra ID token (HTTP {answer.status_code})")
    return str(answer.json()["access_token"])


def delegation_key(endpoint: str, settings: CredentialSettings, expiry: datetime) -> DelegationKey:
    """A key valid from a minute ago (clock skew) until ``expiry``."""
    start = (datetime.now(UTC) - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    body = (
        f"<?xml version='1.0' encoding='utf-8'?><KeyInfo><Start>{start}</Start>"
        f"<Expiry>{expiry.astimezone(UTC).strftime('%Y-%m-%dT%H:%M:%SZ')}</Expiry></KeyInfo>"
    )
    headers = {"Authorization": f"Bearer {entra_token(settings)}", "x-ms-version": KEY_VERSION}
    try:
        answer = httpx.post(
            f"{endpoint}/?restype=service&comp=userdelegationkey", content=body, headers=headers
        )
    except httpx.HTTPError as exc:
        raise CredentialError(f"no user delegation key ({type(exc).__name__})") from None
    if answer.status_code != 200:
        raise CredentialError(f"no user delegation key (HTTP {answer.status_code})")
    root = ET.fromstring(answer.content)

    def field(name: str) -> str:
        return root.findtext(name) or ""

    return DelegationKey(
        field("SignedOid"),
        field("SignedTid"),
        field("SignedStart"),
        field("SignedExpiry"),
        field("SignedService"),
        field("SignedVersion"),
        base64.b64decode(field("Value")),
    )
