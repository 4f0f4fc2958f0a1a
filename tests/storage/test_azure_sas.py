"""AzureBlobSigner: which credentials it takes, and the URLs it builds (offline)."""

from __future__ import annotations

import base64
import hashlib
import hmac
from datetime import timedelta
from urllib.parse import parse_qsl, unquote, urlsplit

import pytest

from deltaport.storage.azure_sas import SAS_VERSION, AzureBlobSigner

KEY = base64.b64encode(b"k" * 64).decode()


@pytest.fixture(autouse=True)
def _no_azure_env(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name.startswith("AZURE"):
            monkeypatch.delenv(name)


def test_account_key_signs_decoded_blob_name() -> None:
    signer = AzureBlobSigner.from_options({"azure_storage_account_key": KEY}, account="acct")
    assert signer is not None and signer.endpoint == "https://acct.blob.core.windows.net"
    blob = "t/p=%F0%9F 😈/a&b+c=d.parquet"
    (url,) = signer.sign("ctr", [blob], timedelta(minutes=5))
    parts = urlsplit(url)
    assert unquote(parts.path) == f"/ctr/{blob}"
    params = dict(parse_qsl(parts.query))
    assert params["sv"] == SAS_VERSION and params["sr"] == "b" and params["sp"] == "r"
    fields = [
        "r",
        "",
        params["se"],
        f"/blob/acct/ctr/{blob}",
        "",
        "",
        "",
        SAS_VERSION,
        "b",
        "",
        "",
        "",
        "",
        "",
        "",
        "",
    ]
    expected = hmac.new(base64.b64decode(KEY), "\n".join(fields).encode(), hashlib.sha256)
    assert params["sig"] == base64.b64encode(expected.digest()).decode()


def test_option_spellings_endpoint_and_sas_token() -> None:
    signer = AzureBlobSigner.from_options(
        {"ACCOUNT_NAME": "a", "azure_endpoint": "http://127.0.0.1:9/a/", "sas_token": "?sv=1&sig=x"}
    )
    assert signer is not None
    assert signer.sign("c", ["d/e f"], timedelta(minutes=1)) == [
        "http://127.0.0.1:9/a/c/d/e%20f?sv=1&sig=x"
    ]


def test_emulator_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AZURITE_BLOB_STORAGE_URL", "http://127.0.0.1:10001")
    signer = AzureBlobSigner.from_options({"use_emulator": "true"})
    assert signer is not None
    assert signer.account == "devstoreaccount1"
    assert signer.endpoint == "http://127.0.0.1:10001/devstoreaccount1"
    assert signer.account_key is not None


def test_without_key_or_token_obstore_signs() -> None:
    assert AzureBlobSigner.from_options({"azure_storage_account_name": "a"}) is None
    assert AzureBlobSigner.from_options({"azure_storage_token": "bearer"}, account="a") is None
    assert AzureBlobSigner.from_options({"account_key": KEY}) is None  # no account anywhere


def test_environment_variables_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AZURE_STORAGE_ACCOUNT_NAME", "envacct")
    monkeypatch.setenv("AZURE_STORAGE_ACCOUNT_KEY", KEY)
    signer = AzureBlobSigner.from_options({})
    assert signer is not None and signer.account == "envacct"
