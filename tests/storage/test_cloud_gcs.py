"""GCS V4 signed URLs, checked offline.

The GCS emulator of the suite (fake-gcs-server, tests/emulators.py) checks no signature, so
this test signs with a freshly generated service-account key and verifies each URL the way
GCS does: it rebuilds the canonical request from the URL as sent and checks the RSA
signature with the public key.
"""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from deltaport.storage import Storage

KEYS = [
    "sales/p=plain/part-0.parquet",
    "sales/p=%F0%9F%98%88%20a%26b/part-1.parquet",
    "sales/test%file%prefix-part-2.parquet",
    "sales/a b+c=d&e/😈 #?.parquet",
]


@pytest.fixture(scope="module")
def private_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="module")
def storage(private_key: rsa.RSAPrivateKey) -> Storage:
    pem = private_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    account = {
        "type": "service_account",
        "project_id": "test",
        "private_key_id": "k1",
        "private_key": pem,
        "client_email": "signer@test.iam.gserviceaccount.com",
        "client_id": "1",
        "token_uri": "https://oauth2.googleapis.com/token",
    }
    return Storage("gs://bucket/sales", {"google_service_account_key": json.dumps(account)})


def _verify(url: str, public_key: rsa.RSAPublicKey) -> None:
    parts = urlsplit(url)
    pairs = [p.split("=", 1) for p in parts.query.split("&")]
    signature = dict(pairs).pop("X-Goog-Signature")
    query = "&".join(f"{k}={v}" for k, v in sorted(pairs) if k != "X-Goog-Signature")
    canonical = "\n".join(
        ["GET", parts.path, query, f"host:{parts.netloc}\n", "host", "UNSIGNED-PAYLOAD"]
    )
    params = parse_qs(parts.query)
    scope = params["X-Goog-Credential"][0].split("/", 1)[1]
    to_sign = "\n".join(
        [
            "GOOG4-RSA-SHA256",
            params["X-Goog-Date"][0],
            scope,
            hashlib.sha256(canonical.encode()).hexdigest(),
        ]
    )
    public_key.verify(
        bytes.fromhex(signature), to_sign.encode(), padding.PKCS1v15(), hashes.SHA256()
    )


def test_v4_urls_name_the_object_and_verify(storage, private_key):
    locations = [storage.root.child(key.removeprefix("sales/")) for key in KEYS]
    urls = storage.sign(locations, timedelta(minutes=15))
    for key, url in zip(KEYS, urls, strict=True):
        parts = urlsplit(url)
        assert parts.scheme == "https" and parts.netloc == "storage.googleapis.com"
        assert unquote(parts.path) == f"/bucket/{key}"
        params = parse_qs(parts.query)
        assert params["X-Goog-Algorithm"] == ["GOOG4-RSA-SHA256"]
        assert params["X-Goog-Expires"] == ["900"]
        assert params["X-Goog-Credential"][0].startswith("signer@test.iam.gserviceaccount.com/")
        _verify(url, private_key.public_key())


def test_tampered_url_does_not_verify(storage, private_key):
    url = storage.sign([storage.root.child("p=plain/part-0.parquet")], timedelta(minutes=5))[0]
    for bad in (
        url.replace("part-0", "part-1"),
        url.replace("X-Goog-Expires=300", "X-Goog-Expires=3000"),
    ):
        with pytest.raises(InvalidSignature):
            _verify(bad, private_key.public_key())
