"""How the provider lets deltaport vend temporary credentials for one storage prefix.

Set under a ``storage:`` entry of the server configuration as ``credentials:``; the storage
entry's ``options`` (obstore keys) supply the provider's own keys where a cloud needs them
(the AWS keys that call STS, the Azure account key, the GCS service account file).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import msgspec

from deltaport.protocol.credentials import AwsTempCredentials, AzureUserDelegationSas, GcpOauthToken

MIN_DURATION_SECONDS = 900
MAX_DURATION_SECONDS = 43_200
"""STS AssumeRole's range (the role's maximum session duration may be lower); the same
bounds apply to the Azure SAS lifetime."""


class CredentialSettings(msgspec.Struct, forbid_unknown_fields=True, rename="camel"):
    duration_seconds: int = 3600
    # AWS: the role assumed with a session policy narrowed to the table's prefix
    aws_role_arn: str | None = None
    aws_external_id: str | None = None
    aws_region: str | None = None
    """The bucket's region (``kms:ViaService``) and STS's; default ``aws_region`` of the options."""
    aws_sts_endpoint: str | None = None
    """Default: the storage ``aws_endpoint`` (MinIO and moto serve STS there), else AWS."""
    aws_recipient_endpoint: str | None = None
    """The S3 endpoint recipients are told to read with; default the storage
    ``aws_endpoint`` (set this when the server reaches the store by a private address)."""
    aws_kms_key: str | None = None
    """A KMS key ARN, or ``*``, when objects are encrypted with SSE-KMS."""
    # Azure: without an account key in the options, a user-delegation SAS signed with a key
    # obtained as a service principal or managed identity
    azure_tenant_id: str | None = None
    azure_client_id: str | None = None
    azure_client_secret: str | None = None
    azure_managed_identity: bool = False
    azure_recipient_endpoint: str | None = None
    """The blob endpoint recipients are told to read with; default the storage options'
    Azure endpoint (an emulator's, a private one's). Azure's own is left for clients to
    derive from the account."""


class CredentialError(Exception):
    """Credentials could not be issued; the message holds no secret."""


class PolicyTooLargeError(CredentialError):
    """The scoped policy exceeds what the cloud accepts; it is never widened to fit."""


@dataclass(frozen=True)
class StorageHints:
    """What a recipient needs besides the credential to reach the store (the protocol's
    answer has no field for it; deltaport's adds ``endpoint`` and ``region``)."""

    endpoint: str | None = None
    region: str | None = None


@dataclass(frozen=True)
class Vended:
    """A credential for one directory and when it expires (timezone-aware, UTC)."""

    secret: AwsTempCredentials | AzureUserDelegationSas | GcpOauthToken
    expires_at: datetime

    @property
    def cloud(self) -> str:
        return {
            AwsTempCredentials: "aws",
            AzureUserDelegationSas: "azure",
            GcpOauthToken: "gcp",
        }[type(self.secret)]
