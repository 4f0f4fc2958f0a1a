"""Azure blob URLs with a shared access signature, made without obstore.

obstore (object_store 0.12) signs Azure SAS URLs over the percent-encoded blob name, but
Azure checks the signature against the decoded name, so every blob whose name needs
encoding (spaces, ``%``, non-ASCII: common in Delta partition directories) gets 403. With an
account key this module signs service SAS URLs itself; with a configured SAS token it
appends the token. Other credentials (Entra ID tokens, managed identity) are left to
obstore's user-delegation signing.
"""

from __future__ import annotations

import base64
import hmac
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import quote

SAS_VERSION = "2022-11-02"
_EMULATOR_ACCOUNT = "devstoreaccount1"
_EMULATOR_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)
_ACCOUNT_NAME_KEYS = ("azure_storage_account_name", "account_name")
_ACCOUNT_KEY_KEYS = (
    "azure_storage_account_key",
    "azure_storage_access_key",
    "azure_storage_master_key",
    "account_key",
    "access_key",
    "master_key",
)
_SAS_KEYS = ("azure_storage_sas_key", "azure_storage_sas_token", "sas_key", "sas_token")
_ENDPOINT_KEYS = ("azure_storage_endpoint", "azure_endpoint", "endpoint")
_EMULATOR_KEYS = ("azure_storage_use_emulator", "use_emulator")


@dataclass(frozen=True)
class AzureBlobSigner:
    """Signs GET URLs for blobs of one storage account."""

    account: str
    endpoint: str
    account_key: bytes | None = None
    sas_token: str | None = None

    @classmethod
    def from_options(
        cls, options: Mapping[str, str], account: str | None = None
    ) -> AzureBlobSigner | None:
        """A signer from obstore-style options (and ``AZURE_*`` environment variables), or
        ``None`` when neither an account key nor a SAS token is configured."""
        found = blob_account(options, account)
        if found is None:
            return None
        name, endpoint, key = found
        sas = _lookup(_merged(options), _SAS_KEYS).lstrip("?")
        if key:
            return cls(name, endpoint, account_key=key)
        if sas:
            return cls(name, endpoint, sas_token=sas)
        return None

    def sign(self, container: str, blobs: Sequence[str], expires_in: timedelta) -> list[str]:
        """Read URLs for ``blobs`` (names inside ``container``)."""
        base = f"{self.endpoint}/{quote(container, safe='')}/"
        if self.account_key is None:
            return [f"{base}{quote(blob, safe='/~')}?{self.sas_token}" for blob in blobs]
        expiry = (datetime.now(UTC) + expires_in).strftime("%Y-%m-%dT%H:%M:%SZ")
        query = f"sv={SAS_VERSION}&sr=b&sp=r&se={quote(expiry, safe='')}&sig="
        # Fields of the service SAS string-to-sign (version 2020-12-06 and later) around
        # the canonical resource: permissions, start, expiry | identifier, IP, protocol,
        # version, resource, snapshot, encryption scope, five response-header overrides.
        head = f"r\n\n{expiry}\n/blob/{self.account}/{container}/"
        tail = f"\n\n\n\n{SAS_VERSION}\nb\n\n\n\n\n\n\n"
        keyed = hmac.new(self.account_key, head.encode(), "sha256")
        tail_bytes = tail.encode()
        quoted_dirs: dict[str, str] = {}
        out = []
        for blob in blobs:
            mac = keyed.copy()
            mac.update(blob.encode() + tail_bytes)
            signature = quote(base64.b64encode(mac.digest()).decode(), safe="")
            directory, _, name = blob.rpartition("/")
            quoted_dir = quoted_dirs.get(directory)
            if quoted_dir is None:
                quoted_dir = quoted_dirs[directory] = quote(directory + "/") if directory else ""
            out.append(f"{base}{quoted_dir}{quote(name, safe='~')}?{query}{signature}")
        return out


def blob_account(
    options: Mapping[str, str], account: str | None = None
) -> tuple[str, str, bytes | None] | None:
    """The account name, blob endpoint and account key (when configured) from obstore-style
    options and ``AZURE_*`` environment variables; ``None`` without an account name."""
    merged = _merged(options)
    emulator = _lookup(merged, _EMULATOR_KEYS).lower() in ("1", "true", "yes")
    name = _lookup(merged, _ACCOUNT_NAME_KEYS) or account
    if emulator:
        name = name or _EMULATOR_ACCOUNT
    if not name:
        return None
    endpoint = _lookup(merged, _ENDPOINT_KEYS)
    if not endpoint:
        if emulator:
            emulator_url = os.environ.get("AZURITE_BLOB_STORAGE_URL", "http://127.0.0.1:10000")
            endpoint = f"{emulator_url.rstrip('/')}/{name}"
        else:
            endpoint = f"https://{name}.blob.core.windows.net"
    key = _lookup(merged, _ACCOUNT_KEY_KEYS) or (_EMULATOR_KEY if emulator else "")
    return name, endpoint.rstrip("/"), base64.b64decode(key) if key else None


def configured_endpoint(options: Mapping[str, str]) -> str | None:
    """The blob endpoint the options (or ``AZURE_*`` environment variables) name, if any:
    an emulator's or a private one; ``None`` for Azure's public endpoint of the account."""
    return _lookup(_merged(options), _ENDPOINT_KEYS).rstrip("/") or None


def _merged(options: Mapping[str, str]) -> dict[str, str]:
    merged = {k.lower(): v for k, v in os.environ.items() if k.startswith("AZURE")}
    merged.update({k.lower(): v for k, v in options.items()})
    return merged


def _lookup(options: Mapping[str, str], names: Sequence[str]) -> str:
    for name in names:
        value = options.get(name)
        if value:
            return value
    return ""
