"""The temporary credentials of a cloud table in the Iceberg REST catalog's terms: the
credential deltaport vends for directory access (scoped to the table's location, which
holds its Iceberg files too, see :mod:`deltaport.iceberg.convert.files`) as FileIO properties, in
both ``config`` and ``storage-credentials``."""

from __future__ import annotations

from deltaport.iceberg.convert.files import reader_path
from deltaport.iceberg.model.catalog import StorageCredential
from deltaport.protocol.credentials import (
    AwsTempCredentials,
    AzureUserDelegationSas,
    GcpOauthToken,
    TemporaryCredentials,
)
from deltaport.storage import parse_location


def file_io_properties(credentials: TemporaryCredentials) -> dict[str, str]:
    """The FileIO properties (Iceberg's names) that read the table with ``credentials``."""
    expires = str(credentials.expirationTime)
    out: dict[str, str] = {}
    if credentials.region:
        out["client.region"] = credentials.region
    aws = credentials.awsTempCredentials
    if isinstance(aws, AwsTempCredentials):
        out |= {
            "s3.access-key-id": aws.accessKeyId,
            "s3.secret-access-key": aws.secretAccessKey,
            "s3.session-token": aws.sessionToken,
            "s3.session-token-expires-at-ms": expires,
        }
        if credentials.endpoint:
            # an S3-compatible store (MinIO, an emulator): addressed by path, not by host
            out |= {"s3.endpoint": credentials.endpoint, "s3.path-style-access": "true"}
    sas = credentials.azureUserDelegationSas
    account = parse_location(credentials.location).account
    if isinstance(sas, AzureUserDelegationSas) and account:
        # keyed by the account's host (Iceberg's Java FileIO), and by name (pyiceberg's)
        host = f"{account}.dfs.core.windows.net"
        out |= {
            f"adls.sas-token.{host}": sas.sasToken,
            f"adls.sas-token-expires-at-ms.{host}": expires,
            "adls.account-name": account,
            "adls.sas-token": sas.sasToken,
        }
        if credentials.endpoint:
            # a blob endpoint that is not Azure's own (Azurite, a private endpoint): only a
            # connection string tells pyiceberg's adlfs FileIO an endpoint over http too
            connection = f"BlobEndpoint={credentials.endpoint};SharedAccessSignature={sas.sasToken}"
            out["adls.connection-string"] = connection
    gcp = credentials.gcpOauthToken
    if isinstance(gcp, GcpOauthToken):
        out |= {"gcs.oauth2.token": gcp.oauthToken, "gcs.oauth2.token-expires-at": expires}
    return out


def storage_credentials(credentials: TemporaryCredentials) -> list[StorageCredential]:
    """The ``storage-credentials`` list: one credential for the table's location (its data
    files and its Iceberg files alike)."""
    prefix = reader_path(parse_location(credentials.location))
    return [StorageCredential(prefix=prefix, config=file_io_properties(credentials))]
