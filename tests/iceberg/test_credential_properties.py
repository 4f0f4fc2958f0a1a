"""A vended credential in Iceberg's FileIO property names, for each cloud deltaport vends
for (S3 and Azure are read end to end in test_cloud_catalog.py and test_azure_catalog.py;
GCS only here)."""

from __future__ import annotations

from deltaport.iceberg.rest.credentials import file_io_properties, storage_credentials
from deltaport.protocol.credentials import (
    AwsTempCredentials,
    AzureUserDelegationSas,
    GcpOauthToken,
    TemporaryCredentials,
)

EXPIRES = 1_900_000_000_000


def test_aws_on_amazon_s3_has_no_endpoint() -> None:
    credentials = TemporaryCredentials(
        location="s3://bucket/t",
        expirationTime=EXPIRES,
        awsTempCredentials=AwsTempCredentials("AKIA", "secret", "token"),
        region="eu-west-1",
    )
    assert file_io_properties(credentials) == {
        "client.region": "eu-west-1",
        "s3.access-key-id": "AKIA",
        "s3.secret-access-key": "secret",
        "s3.session-token": "token",
        "s3.session-token-expires-at-ms": str(EXPIRES),
    }


def test_azure_sas_is_keyed_by_the_account_host() -> None:
    location = "abfss://box@acct.dfs.core.windows.net/tables/t"
    credentials = TemporaryCredentials(
        location=location,
        expirationTime=EXPIRES,
        azureUserDelegationSas=AzureUserDelegationSas("sv=2024&sig=x"),
    )
    properties = file_io_properties(credentials)
    assert properties == {
        "adls.sas-token.acct.dfs.core.windows.net": "sv=2024&sig=x",
        "adls.sas-token-expires-at-ms.acct.dfs.core.windows.net": str(EXPIRES),
        "adls.account-name": "acct",
        "adls.sas-token": "sv=2024&sig=x",
    }
    assert storage_credentials(credentials) == [{"prefix": location, "config": properties}]


def test_azure_off_azure_gets_a_connection_string_with_the_endpoint() -> None:
    """An emulator's or a private blob endpoint reaches adlfs (pyiceberg's FileIO for
    abfss://) only in a connection string; on Azure itself there is none (above)."""
    credentials = TemporaryCredentials(
        location="abfss://box@acct.dfs.core.windows.net/tables/t",
        expirationTime=EXPIRES,
        azureUserDelegationSas=AzureUserDelegationSas("sv=2024&sig=x"),
        endpoint="http://127.0.0.1:10000/acct",
    )
    properties = file_io_properties(credentials)
    assert properties["adls.connection-string"] == (
        "BlobEndpoint=http://127.0.0.1:10000/acct;SharedAccessSignature=sv=2024&sig=x"
    )
    assert properties["adls.sas-token"] == "sv=2024&sig=x"


def test_gcs_oauth_token() -> None:
    credentials = TemporaryCredentials(
        location="gs://bucket/t", expirationTime=EXPIRES, gcpOauthToken=GcpOauthToken("ya29")
    )
    assert file_io_properties(credentials) == {
        "gcs.oauth2.token": "ya29",
        "gcs.oauth2.token-expires-at": str(EXPIRES),
    }
