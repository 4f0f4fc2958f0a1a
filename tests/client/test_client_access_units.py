"""The access-mode choice (the protocol's compatibility table), the credentials each cloud's
answer becomes for obstore, renewal by the clock, and which directory covers a file."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from obstore.store import AzureStore, GCSStore

from deltaport.client.access import choose_mode
from deltaport.client.base.errors import SharingError
from deltaport.client.base.models import TableAccess
from deltaport.client.dir_access.dir_storage import DirectoryStorage
from deltaport.client.remote.credentials import CredentialSource, VendedCredentials
from deltaport.protocol.credentials import (
    AzureUserDelegationSas,
    GcpOauthToken,
    TemporaryCredentials,
)
from deltaport.storage import StorageError, parse_location

T0 = datetime(2030, 1, 1, tzinfo=UTC)
S3 = "s3://b/t"


@pytest.mark.parametrize(
    ("wanted", "modes", "location", "expected"),
    [
        ("auto", ("url",), S3, "url"),  # accessModes omitted reads as [url]
        ("auto", ("url", "dir"), S3, "dir"),
        ("auto", ("dir",), S3, "dir"),
        ("dir", ("url", "dir"), S3, "dir"),
        ("auto", ("url", "dir"), "/local/t", "url"),  # not a cloud this client reads
        ("dir", ("url",), S3, SharingError),
        ("auto", ("dir",), "hdfs://x/t", SharingError),
    ],
)
def test_choice_follows_the_compatibility_table(
    wanted: str, modes: tuple[str, ...], location: str, expected: object
) -> None:
    access = TableAccess(modes, location)
    if expected is SharingError:
        with pytest.raises(SharingError):
            choose_mode(wanted, access, "s.sc.t")  # type: ignore[arg-type]
    else:
        assert choose_mode(wanted, access, "s.sc.t") == expected  # type: ignore[arg-type]


def test_listing_items_without_access_modes_are_url_only() -> None:
    assert TableAccess.from_json({"name": "t"}) == TableAccess(("url",), None, ())


def test_azure_and_gcs_answers_become_obstore_credentials() -> None:
    """Azurite ignores directory SAS (sr=d), so Azure is tested up to what obstore gets."""
    expiry = int(T0.timestamp() * 1000)
    sas = TemporaryCredentials(
        "abfss://c@acct.dfs.core.windows.net/t",
        expiry,
        azureUserDelegationSas=AzureUserDelegationSas("?sv=1&sr=d&sig=x"),
    )
    azure = VendedCredentials.from_protocol(sas)
    assert azure.provider_answer(T0) == {"sas_token": "sv=1&sr=d&sig=x", "expires_at": T0}
    gcp = VendedCredentials.from_protocol(
        TemporaryCredentials("gs://b/t", expiry, gcpOauthToken=GcpOauthToken("ya29"))
    )
    assert gcp.provider_answer(T0) == {"token": "ya29", "expires_at": T0}
    for credentials, kind in ((azure, AzureStore), (gcp, GCSStore)):
        source = CredentialSource(credentials, lambda c=credentials: c)  # type: ignore[misc]
        root = parse_location(credentials.location)
        storage = DirectoryStorage(root, [source])
        store = storage.object_store(root.child("_delta_log/0.json"))
        assert isinstance(store, kind) and store.credential_provider is not None


def test_renewal_by_the_clock() -> None:
    now = [T0]
    fresh = VendedCredentials(S3, "aws", ("k", "s", "t"), T0 + timedelta(minutes=15))
    asked: list[int] = []

    def renew() -> VendedCredentials:
        asked.append(1)
        return VendedCredentials(S3, "aws", ("k2", "s2", "t2"), now[0] + timedelta(minutes=15))

    source = CredentialSource(fresh, renew, margin=timedelta(minutes=2), clock=lambda: now[0])
    assert source.current() is fresh and not asked
    now[0] = T0 + timedelta(minutes=14)
    assert source.current().secret[0] == "k2" and source.renewals == 1
    assert source.provider()["expires_at"] == now[0] + timedelta(minutes=13)


def test_each_file_uses_the_deepest_directory_covering_it() -> None:
    creds = [
        VendedCredentials(loc, "aws", ("k", "s", "t"), T0)
        for loc in ("s3://b/t", "s3://b/t/aux", "s3://other/x")
    ]
    sources = [CredentialSource(c, lambda c=c: c) for c in creds]  # type: ignore[misc]
    storage = DirectoryStorage(parse_location("s3://b/t"), sources)
    assert storage.source_for(parse_location("s3://b/t/p=1/f.parquet"))[0] == 0
    assert storage.source_for(parse_location("s3://b/t/aux/f.parquet"))[0] == 1
    assert storage.source_for(parse_location("s3://other/x/f.parquet"))[0] == 2
    with pytest.raises(StorageError, match="outside"):
        storage.source_for(parse_location("s3://b/tables/f.parquet"))
